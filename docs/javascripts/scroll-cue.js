// Marks each figure box that scrolls sideways and still hides part of its figure on the right
// (class scroll-more), so that the stylesheet fades that edge: a phone draws no scroll bar,
// and a figure cut at the screen's edge would read as the whole figure.
// (docs/stylesheets/extra.css; checked by tests/docs/layout_checks.py.)
(function () {
  function mark() {
    document.querySelectorAll(".md-typeset .figure-scroll").forEach(function (box) {
      var more = box.scrollLeft + box.clientWidth < box.scrollWidth - 1;
      box.classList.toggle("scroll-more", more);
    });
  }
  window.addEventListener("load", mark);
  window.addEventListener("resize", mark);
  document.addEventListener("scroll", function (event) {
    var box = event.target;
    if (box.classList && box.classList.contains("figure-scroll")) mark();
  }, true);
})();
