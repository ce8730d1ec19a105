// MathJax 3 configuration for pymdownx.arithmatex (generic mode). MathJax itself is vendored by
// scripts/setup_docs.sh into assets/vendor/mathjax/ and loaded right after this file, so every
// component and font it needs comes from this site, never from a CDN.
(function () {
  var here = document.currentScript && document.currentScript.src;
  var root = here ? here.replace(/javascripts\/mathjax-config\.js.*$/, "") : "";
  window.MathJax = {
    loader: { paths: { mathjax: root + "assets/vendor/mathjax" } },
    tex: {
      inlineMath: [["\\(", "\\)"]],
      displayMath: [["\\[", "\\]"]],
      processEscapes: true,
      processEnvironments: true
    },
    options: {
      ignoreHtmlClass: ".*|",
      processHtmlClass: "arithmatex"
    },
    chtml: { fontURL: root + "assets/vendor/mathjax/output/chtml/fonts/woff-v2" }
  };
})();

