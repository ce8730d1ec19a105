"""One bad upload never costs the class its grades (issue 11): every way a submission can fail
to be found or read becomes that submission's result, and the batch goes on.

One class holds a submission of each kind, plus good ones, and is graded in ONE run of the real
`course grade` (as root, as CI and Gradescope run it); fast unit tests of
:func:`autograder.grading.uploads.load` check the caps and messages in detail.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import stat
import struct
import textwrap
import zipfile
from pathlib import Path

import pytest

from autograder import catalogue
from autograder.grading import ids, submission, uploads
from tests.helpers import SOLUTIONS, solution_source
from tests.helpers import course

# One xdist worker runs all of this module (make test: --dist loadgroup), so its graded class is
# built once and no other worker sits waiting on the shared copy's lock.
pytestmark = pytest.mark.xdist_group("bad-uploads-class")

TOPICS = catalogue.topic_modules()
EX1, EX2, EX3, EX4, EX5, EX6, EX7 = TOPICS[:7]
POINTS = {t: catalogue.get_topic(t).points for t in TOPICS}
DEEP = 1_100  # folders, as in the issue


# ------------------------------------------------------------------ building bad uploads


def _zip(path: Path, members: dict[str, bytes | str], **kw) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, **kw) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _solutions(prefix: str = "") -> dict[str, str]:
    return {f"{prefix}{t}.py": solution_source(t) for t in TOPICS}


def _patch(path: Path, name: str, *, flags: int = 0, file_size: int | None = None) -> None:
    """Set flag bits (and optionally the declared size) of one member, in both its local
    header and its central-directory record, as a zip tool that wrote them would."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info, pos = z.getinfo(name), z.start_dir
    local = info.header_offset
    assert data[local:local + 4] == b"PK\x03\x04"
    struct.pack_into("<H", data, local + 6, struct.unpack_from("<H", data, local + 6)[0] | flags)
    if file_size is not None:
        struct.pack_into("<I", data, local + 22, file_size)
    while data[pos:pos + 4] == b"PK\x01\x02":
        nlen, elen, clen = struct.unpack_from("<HHH", data, pos + 28)
        if bytes(data[pos + 46:pos + 46 + nlen]) == name.encode():
            struct.pack_into("<H", data, pos + 8, struct.unpack_from("<H", data, pos + 8)[0] | flags)
            if file_size is not None:
                struct.pack_into("<I", data, pos + 24, file_size)
        pos += 46 + nlen + elen + clen
    path.write_bytes(bytes(data))


def _member_data_offset(data: bytes, info: zipfile.ZipInfo) -> int:
    nlen, elen = struct.unpack_from("<HH", data, info.header_offset + 26)
    return info.header_offset + 30 + nlen + elen


def make_encrypted(path: Path) -> None:
    """ex01 with the encryption flag set (what `zip -P` writes); ex02 readable."""
    _zip(path, {f"{EX1}.py": solution_source(EX1), f"{EX2}.py": solution_source(EX2)})
    _patch(path, f"{EX1}.py", flags=0x1)


def make_corrupt(path: Path) -> None:
    """ex01 stored with one byte changed (bad CRC), ex02 deflated with garbage in its stream."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{EX1}.py", solution_source(EX1), compress_type=zipfile.ZIP_STORED)
        z.writestr(f"{EX2}.py", solution_source(EX2), compress_type=zipfile.ZIP_DEFLATED)
        z.writestr(f"{EX3}.py", solution_source(EX3), compress_type=zipfile.ZIP_DEFLATED)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        one, two = z.getinfo(f"{EX1}.py"), z.getinfo(f"{EX2}.py")
    at = _member_data_offset(data, one) + 40
    data[at] ^= 0x20  # one character's case: still text, no longer what the CRC says
    at = _member_data_offset(data, two) + 3
    data[at:at + 12] = b"\xff" * 12
    path.write_bytes(bytes(data))


def make_zip64(path: Path) -> None:
    """A valid zip64 archive (zip64 extra fields and end records) of every solution."""
    limits = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
    zipfile.ZIP64_LIMIT = zipfile.ZIP_FILECOUNT_LIMIT = 0  # as if it were over 4 GiB
    try:
        _zip(path, _solutions("work/"))
    finally:
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = limits
    assert b"PK\x06\x06" in path.read_bytes()  # the zip64 end of central directory


def make_bomb(path: Path) -> None:
    """ex01 declares 3 MiB uncompressed; ex02 declares 200 bytes but inflates to 3 MiB."""
    huge = "#" * (3 * 2**20)
    _zip(path, {f"{EX1}.py": huge, f"{EX2}.py": huge, f"{EX3}.py": solution_source(EX3)})
    _patch(path, f"{EX2}.py", file_size=200)


def make_paths(path: Path) -> None:
    """Traversal, absolute, over-long and non-UTF-8 member names; one good topic deep down."""
    long_dir = "n" * 300
    members = {
        f"../{EX1}.py": solution_source(EX1),
        f"/{EX2}.py": solution_source(EX2),
        f"work/deep/{EX3}.py": solution_source(EX3),
        f"{long_dir}/{EX4}.py": solution_source(EX4),
        f"caf_/{EX5}.py": solution_source(EX5),
    }
    _zip(path, members)
    # Make "caf_" the Latin-1 bytes of "café" (no UTF-8 flag): a Windows zip tool's doing.
    data = path.read_bytes().replace(b"caf_/", b"caf\xe9/")
    path.write_bytes(data)


def make_bad_utf8_names(path: Path) -> None:
    """Names flagged UTF-8 that are not: zipfile cannot even list the archive."""
    _zip(path, {f"caf\u00e9/{EX1}.py": solution_source(EX1)})
    path.write_bytes(path.read_bytes().replace("é".encode(), b"\xff\xfe"))


def make_specials(folder: Path, monkeypatch) -> None:
    """Fifos, sockets, a device, dangling/looping symlinks and symlinks out of the submission
    (one to the reference solutions: following it would give marks), a non-UTF-8 folder."""
    folder.mkdir()
    os.mkfifo(folder / f"{EX1}.py")
    monkeypatch.chdir(folder)  # a socket's path must be short: bind it relative
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(f"{EX2}.py")
    monkeypatch.undo()
    if os.geteuid() == 0:
        os.mknod(folder / f"{EX3}.py", stat.S_IFCHR | 0o644, os.makedev(1, 5))  # /dev/zero
    os.symlink(folder / "nowhere", folder / f"{EX4}.py")
    os.symlink("loop", folder / "loop")
    os.symlink(SOLUTIONS / f"{EX5}.py", folder / f"{EX5}.py")
    os.symlink(SOLUTIONS, folder / "sol")  # holds every topic one level down
    os.symlink("/etc/passwd", folder / "passwd")
    weird = os.fsencode(folder) + b"/caf\xe9"
    os.mkdir(weird)
    with open(weird + f"/{EX6}.py".encode(), "w", encoding="utf-8") as f:
        f.write(solution_source(EX6))
    with open(weird + b"/\xff\xfe notes.txt", "wb") as f:
        f.write(b"\xff")


def make_deep(folder: Path) -> Path:
    """ex01 at the top, ex02 under ``DEEP`` nested folders. Returns the deepest folder."""
    folder.mkdir()
    (folder / f"{EX1}.py").write_text(solution_source(EX1), "utf-8")
    bottom = folder
    for _ in range(DEEP):  # not mkdir(parents=True): it recurses once per level
        bottom = bottom / "d"
        bottom.mkdir()
    (bottom / f"{EX2}.py").write_text(solution_source(EX2), "utf-8")
    return bottom


def remove_deep(folder: Path) -> None:
    """shutil.rmtree recurses once per level (RecursionError past ~1,000): go bottom up."""
    bottom = folder / ("d/" * DEEP)
    (bottom / f"{EX2}.py").unlink(missing_ok=True)
    for level in range(DEEP, 0, -1):
        try:
            os.rmdir(os.path.join(folder, *["d"] * level))
        except FileNotFoundError:
            pass


def make_long_names(folder: Path) -> None:
    """ex01 at the top; ex02 under 20 folders of 250-character names (paths past PATH_MAX:
    only a descriptor-relative walk can even create them)."""
    folder.mkdir()
    (folder / f"{EX1}.py").write_text(solution_source(EX1), "utf-8")
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i in range(20):
            name = f"{i:02d}" + "n" * 248
            os.mkdir(name, dir_fd=fd)
            sub = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = sub
        out = os.open(f"{EX2}.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, solution_source(EX2).encode())
        os.close(out)
    finally:
        os.close(fd)


def make_many(folder: Path, n: int = 100_000) -> None:
    """``n`` tiny files; ex01 sorts before them, ex02 is in a folder after them."""
    folder.mkdir()
    (folder / f"{EX1}.py").write_text(solution_source(EX1), "utf-8")
    for i in range(n):
        os.close(os.open(folder / f"f{i:06d}", os.O_WRONLY | os.O_CREAT, 0o644))
    (folder / "zz").mkdir()
    (folder / "zz" / f"{EX2}.py").write_text(solution_source(EX2), "utf-8")


#: Uploads whose names cannot be ids, or share one (issue 34, item 2): child name (bytes) ->
#: the derived id it is listed under. Each holds every solution: a mark would mean it was read.
BAD_NAMES = {
    b"esc\x1b[2J\x1b]0;pwned\x07name": "esc_[2J_]0;pwned_name-",
    b"caf\xe9": "caf\ufffd-",
    b"x" * 240: "x" * 120 + "-",
    b"dup.zip": "dup.zip-", b"dup.ZIP": "dup.ZIP-",
    b"alice": "alice-", b"alice.zip": "alice.zip-",
}
#: Two derived ids pinned as literals: they are the same on every machine and every run.
PINNED = {b"dup.zip": "dup.zip-bd0b4898", b"dup.ZIP": "dup.ZIP-639910db"}


def make_bad_names(klass: Path) -> None:
    base = os.fsencode(klass) + b"/"
    for name in BAD_NAMES:
        if name.lower().endswith(b".zip"):
            _zip(Path(os.fsdecode(base + name)), _solutions())
            continue
        os.mkdir(base + name)
        for file, text in _solutions().items():
            with open(base + name + b"/" + file.encode(), "w", encoding="utf-8") as f:
                f.write(text)


def derived(name: bytes) -> str:
    return ids.derived_id(os.fsdecode(name))


# ------------------------------------------------------------------ one class, one graded run


@pytest.fixture(scope="module")
def bad_class(tmp_path_factory):
    monkeypatch = pytest.MonkeyPatch()
    root = tmp_path_factory.mktemp("bad_uploads")
    klass = root / "class"
    klass.mkdir()
    (klass / "good").mkdir()
    for name, text in _solutions().items():
        (klass / "good" / name).write_text(text, "utf-8")
    make_zip64(klass / "zip64.zip")
    make_encrypted(klass / "encrypted.zip")
    make_corrupt(klass / "corrupt.zip")
    whole = _zip(root / "whole.zip", _solutions())
    (klass / "truncated.zip").write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    _zip(klass / "nested.zip", {"work/inner.zip": whole.read_bytes()})
    make_bomb(klass / "bomb.zip")
    make_paths(klass / "paths.zip")
    make_bad_utf8_names(klass / "badnames.zip")
    make_specials(klass / "specials", monkeypatch)
    make_long_names(klass / "longnames")
    make_many(klass / "many")
    make_bad_names(klass)
    out = root / "out"
    try:
        make_deep(klass / "deep")
        proc = course("grade", "--class", str(klass), "--out", str(out), "--jobs", "2")
    finally:
        remove_deep(klass / "deep")
    results = {p.stem: json.loads(p.read_text("utf-8")) for p in (out / "results").glob("*.json")}
    yield proc, out, results


def _topic(doc: dict, topic: str) -> float:
    return doc["extra_data"]["topics"][topic]


def _says(out: Path, doc: dict, sid: str, *phrases: str) -> None:
    """Each phrase is in the results' `output` and in the feedback."""
    # feedback.md quotes the grader's reasons in code spans (results.text.md_text)
    feedback = (out / "feedback" / f"{sid}.md").read_text("utf-8").replace("`", "")
    for phrase in phrases:
        assert phrase in doc["output"], (sid, phrase, doc["output"])
        assert phrase in feedback, (sid, phrase)


@pytest.mark.slow
def test_the_batch_finishes_and_every_upload_has_a_result(bad_class):
    proc, out, results = bad_class
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = {"good", "zip64", "encrypted", "corrupt", "truncated", "nested", "bomb", "paths",
                "badnames", "specials", "deep", "longnames", "many",
                *(derived(name) for name in BAD_NAMES)}
    assert set(results) == expected
    rows = (out / "grades.csv").read_text("utf-8").splitlines()[1:]
    assert sorted(r.split(",")[0] for r in rows) == sorted(expected)


@pytest.mark.slow
def test_good_and_zip64_submissions_get_full_marks(bad_class):
    _, _, results = bad_class
    for sid in ("good", "zip64"):
        assert results[sid]["extra_data"]["status"] == "ok", results[sid]["output"]
        assert results[sid]["score"] == 100.0


@pytest.mark.slow
def test_unreadable_members_fail_only_their_topic(bad_class):
    _, out, results = bad_class
    enc = results["encrypted"]
    assert enc["extra_data"]["status"] == "partial"
    assert _topic(enc, EX1) == 0 and _topic(enc, EX2) == POINTS[EX2]
    _says(out, enc, "encrypted", f"{EX1}.py: is encrypted (password-protected)")
    bad = results["corrupt"]
    assert bad["extra_data"]["status"] == "partial"
    assert _topic(bad, EX1) == _topic(bad, EX2) == 0 and _topic(bad, EX3) == POINTS[EX3]
    _says(out, bad, "corrupt", f"{EX1}.py: could not be read from the zip: its checksum",
          f"{EX2}.py: could not be read from the zip")
    bomb = results["bomb"]
    assert _topic(bomb, EX1) == _topic(bomb, EX2) == 0 and _topic(bomb, EX3) == POINTS[EX3]
    _says(out, bomb, "bomb", f"{EX1}.py: larger than 2 MiB uncompressed", f"{EX2}.py: ")


@pytest.mark.slow
def test_unreadable_archives_are_errors_with_the_reason(bad_class):
    _, out, results = bad_class
    for sid in ("truncated", "badnames"):
        assert results[sid]["extra_data"]["status"] == "error"
        assert results[sid]["score"] == 0
        _says(out, results[sid], sid, "Nothing could be graded: not a readable zip archive")
        # the reason once, at the top; each topic one line that points there
        feedback = (out / "feedback" / f"{sid}.md").read_text("utf-8")
        assert feedback.count("not a readable zip archive") == 1, feedback
        assert feedback.count("could not run, for the reason above") == len(POINTS)
        # the results' summary and the report say it once too, and no test of a submission
        # that ran nothing was "skipped for want of CUDA" (a new user counted 9 and a CUDA line)
        assert results[sid]["output"].count("not a readable zip archive") == 1
        assert "CUDA" not in results[sid]["output"]
        report = (out / "report.html").read_text("utf-8")
        row = report[report.index(f">{sid}<"):][:3000]
        assert row.count("not a readable zip archive") == 1, row
    nested = results["nested"]
    assert nested["extra_data"]["status"] == "error"
    _says(out, nested, "nested", "archives inside a submission are not opened: put the files "
                                 "themselves in it: work/inner.zip")


@pytest.mark.slow
def test_member_paths_out_of_the_archive_or_too_long_are_ignored(bad_class):
    _, out, results = bad_class
    doc = results["paths"]
    assert doc["extra_data"]["status"] == "partial"
    got = {t: _topic(doc, t) for t in (EX1, EX2, EX3, EX4, EX5)}
    # ex03 deep in a folder and ex05 under a Latin-1 folder name are read; the rest never.
    assert got == {EX1: 0, EX2: 0, EX3: POINTS[EX3], EX4: 0, EX5: POINTS[EX5]}
    _says(out, doc, "paths", "members with an absolute or '..' path were ignored",
          "members whose names are too long for a file system were ignored")


@pytest.mark.slow
def test_special_files_and_symlinks_are_never_opened_or_followed(bad_class):
    """A fifo opened would hang the batch (the run's timeout fails it); a symlink followed to
    the reference solutions would give marks."""
    _, out, results = bad_class
    doc = results["specials"]
    assert doc["extra_data"]["status"] == "partial"
    scores = doc["extra_data"]["topics"]
    assert scores == {t: (POINTS[t] if t == EX6 else 0) for t in TOPICS}  # ex06: non-UTF-8 dir
    _says(out, doc, "specials", f"{EX1}.py is a fifo, not read", f"{EX2}.py is a socket",
          f"{EX4}.py is a symlink, not read", f"{EX5}.py is a symlink, not read",
          "symlinks, fifos, sockets and devices are not read")
    if os.geteuid() == 0:
        _says(out, doc, "specials", f"{EX3}.py is a device file, not read")


@pytest.mark.slow
def test_deep_long_and_crowded_folders_are_read_up_to_the_caps(bad_class):
    _, out, results = bad_class
    notes = {"deep": f"folders over {submission.MAX_DEPTH} levels deep were not examined",
             "longnames": "a folder could not be read (File name too long)",
             "many": f"only the first {submission.MAX_ENTRIES:,} entries were examined"}
    for sid, note in notes.items():
        doc = results[sid]
        assert doc["extra_data"]["status"] == "partial", sid
        assert _topic(doc, EX1) == POINTS[EX1] and _topic(doc, EX2) == 0, sid
        _says(out, doc, sid, f"{EX2}.py not found in the submission", note)


@pytest.mark.slow
def test_unusable_and_shared_names_are_error_results_under_derived_ids(bad_class):
    """Issue 34: a control character in one child's name, or dup.zip beside dup.ZIP, made
    `course grade --class` exit 2 and grade nobody. Each such upload is now its own error
    result under a safe, deterministic id, in grades.csv and the report; nothing of it is read
    (each holds every solution), and the rest of the class is graded."""
    proc, out, results = bad_class
    assert proc.returncode == 0, proc.stderr[-3000:]
    csv_rows = {r.split(",")[0]: r for r in
                (out / "grades.csv").read_text("utf-8").splitlines()[1:]}
    report = (out / "report.html").read_text("utf-8")
    for name, prefix in BAD_NAMES.items():
        sid = derived(name)
        assert sid.startswith(prefix) and len(sid) == len(prefix) + 8, (name, sid)
        assert PINNED.get(name, sid) == sid
        doc = results[sid]
        assert doc["extra_data"]["status"] == "error" and doc["score"] == 0, (sid, doc["output"])
        assert csv_rows[sid].endswith(",0.00,100.00,error"), csv_rows[sid]
        assert sid in report, sid
    says = {b"esc\x1b[2J\x1b]0;pwned\x07name": "the upload's name 'esc\\x1b[2J\\x1b]0;pwned"
                                               "\\x07name' is not a usable name",
            b"caf\xe9": "the upload's name 'caf\ufffd' is not valid UTF-8",
            b"x" * 240: "the upload's name 'xxxxxxxxxx",
            b"dup.ZIP": "2 uploads map to the id 'dup' (this one is 'dup.ZIP')",
            b"alice.zip": "2 uploads map to the id 'alice' (this one is 'alice.zip')"}
    for name, phrase in says.items():
        _says(out, results[derived(name)], derived(name), "Nothing could be graded: " + phrase)
    _says(out, results[derived(b"x" * 240)], derived(b"x" * 240),
          "is 240 bytes long; at most 200 can name its results file")
    # A student's feedback names their own upload, never the classmate's that shares the id.
    assert "dup.zip" not in (out / "feedback" / f"{derived(b'dup.ZIP')}.md").read_text("utf-8")
    # No raw control character reached any output an instructor prints.
    for path in (out / "grades.csv", out / "report.html", *(out / "feedback").iterdir()):
        assert "\x1b" not in path.read_text("utf-8"), path
    assert "\x1b" not in proc.stdout + proc.stderr


def test_typed_paths_with_unusable_or_shared_names_stay_usage_errors(tmp_path):
    """Paths the instructor types can be renamed at once: exit 2 before anything is graded."""
    klass = tmp_path / "class"
    (klass / "alice").mkdir(parents=True)
    _zip(klass / "alice.zip", {f"{EX1}.py": solution_source(EX1)})
    (klass / ("x" * 240)).mkdir()
    (klass / "bob").mkdir()
    for typed, says in ((klass / "alice.zip", "is also the id of alice in the same folder"),
                        (klass / ("x" * 240), "rename it"),
                        (klass / "bob", "two submissions have the id 'bob'")):
        argv = [str(typed)] + (["--class", str(klass)] if typed.name == "bob" else [])
        proc = course("grade", *argv, "--out", str(tmp_path / "out"), timeout=120)
        assert proc.returncode == 2 and says in proc.stderr, (typed.name, proc.stderr[-2000:])
        assert not (tmp_path / "out").exists()


def test_derived_ids_depend_on_the_name_alone_and_are_always_usable(tmp_path):
    names = ["a\x1bb", "a\x07b", ".hidden", "a/b", "a\\b", "", "\u202e" * 300,
             os.fsdecode(b"\xff\xfe"), "x" * 300, "dup.zip", "dup.ZIP"]
    got = [ids.derived_id(n) for n in names]
    assert len(set(got)) == len(got)  # equal safe forms ("a_b" twice) kept apart by the hash
    for sid in got:
        assert ids.unusable(sid) is None, sid
    assert ids.derived_id("dup.zip") == PINNED[b"dup.zip"]
    (tmp_path / "dup.zip").write_bytes(b"")
    (tmp_path / "dup.ZIP").write_bytes(b"")
    (tmp_path / "one.zip").write_bytes(b"")
    assert ids.identify(tmp_path / "one.zip") == ("one", None)
    sid, why = ids.identify(tmp_path / "dup.ZIP")
    assert sid == PINNED[b"dup.ZIP"] and "2 uploads map to the id 'dup'" in why
    loaded = uploads.load(tmp_path / "dup.ZIP")
    assert (loaded.id, loaded.error, loaded.sources) == (sid, why, {})


# ------------------------------------------------------------------ a file changing while read

CHANGE_HOOK = textwrap.dedent("""
    import os
    _real_open, _done = os.open, set()

    def _open(path, flags, *args, **kw):
        fd = _real_open(path, flags, *args, **kw)
        p = os.fsdecode(path) if not isinstance(path, int) else ""
        for sid, change in (("grows", b"#" * (3 * 2**20)), ("changes", None)):
            if p.endswith(f"/{sid}/ex01_vectors.py") and sid not in _done:
                _done.add(sid)  # once: after the listing saw it, before it is read
                with open(p, "ab" if change else "wb") as f:
                    f.write(change or CHANGED)
        return fd

    os.open = _open
""")


@pytest.mark.slow
def test_a_file_that_changes_while_it_is_read_is_graded_and_hashed_as_read(tmp_path):
    """Grown past the cap between listing and reading: refused, not read unbounded. Rewritten
    then: graded as rewritten, and the result's hash is of those bytes (a resume can trust it)."""
    klass = tmp_path / "class"
    for sid in ("grows", "changes"):
        (klass / sid).mkdir(parents=True)
        (klass / sid / f"{EX1}.py").write_text(solution_source(EX1), "utf-8")
    changed = solution_source(EX1) + "\ndef dot(a, b):\n    return 0.0\n"
    prelude = f"CHANGED = {changed.encode()!r}\n" + CHANGE_HOOK
    out = tmp_path / "out"
    proc = course("grade", "--class", str(klass), "--out", str(out), "--jobs", "1",
                  prelude=prelude, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    grows = json.loads((out / "results" / "grows.json").read_text("utf-8"))
    assert "larger than 2 MiB" in grows["output"] and _topic(grows, EX1) == 0
    doc = json.loads((out / "results" / "changes.json").read_text("utf-8"))
    assert 0 < _topic(doc, EX1) < POINTS[EX1]  # the rewritten dot() is what was graded
    again = uploads.load(klass / "changes")
    assert again.sources[EX1] == changed.encode()
    assert doc["extra_data"]["submission_sha256"] == again.sha256


# ------------------------------------------------------------------ unit tests of load()


def test_read_regular_reads_to_the_end_not_to_the_stat_size(tmp_path):
    f = tmp_path / "a.py"
    f.write_bytes(b"x" * 10)
    assert submission.read_regular(f, 10) == b"x" * 10
    with pytest.raises(ValueError, match="over 9 bytes"):
        submission.read_regular(f, 9)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(ValueError, match="not a regular file"):  # opened without blocking
        submission.read_regular(tmp_path / "fifo", 10)
    os.symlink(f, tmp_path / "link")
    with pytest.raises(ValueError, match="could not be opened"):
        submission.read_regular(tmp_path / "link", 10)


def test_a_zip_whose_table_of_contents_is_huge_is_refused_before_parsing(tmp_path):
    path = tmp_path / "toc.zip"
    names = 1 + submission.MAX_ZIP_DIRECTORY_BYTES // 250
    with zipfile.ZipFile(path, "w") as z:
        for i in range(names):
            z.writestr(f"{i:08d}" + "n" * 196, b"")
    loaded = uploads.load(path)
    assert loaded.error and "table of contents" in loaded.error and not loaded.sources


def test_a_zip_with_many_entries_is_read_shallowest_first_up_to_the_cap(tmp_path):
    members = {f"a/{i:05d}.txt": "" for i in range(submission.MAX_ENTRIES + 5)}
    members[f"{EX1}.py"] = "x = 1\n"  # listed last, but the shallowest: examined
    members[f"a/b/{EX2}.py"] = "x = 2\n"  # beyond the cap
    loaded = uploads.load(_zip(tmp_path / "many.zip", members))
    assert loaded.sources == {EX1: b"x = 1\n"}
    assert f"only the first {submission.MAX_ENTRIES:,} entries were examined" in (
        loaded.problems[EX2])


def test_many_candidates_at_one_depth_are_named_up_to_three(tmp_path):
    """Red team: 10,000 same-depth copies of one exercise made a message of all their paths
    (270 KB, copied into every test's result: 11 MB of results JSON)."""
    n = 5000
    members = {f"d{i:05d}/{EX1}.py": "x = 1\n" for i in range(n)}
    members[f"{EX2}.py"] = "x = 2\n"
    loaded = uploads.load(_zip(tmp_path / "dupes.zip", members))
    assert loaded.sources == {EX2: b"x = 2\n"}
    why = loaded.problems[EX1]
    assert why == (f"{EX1}: {n:,} candidate files at the same depth: d00000/{EX1}.py, "
                   f"d00001/{EX1}.py, d00002/{EX1}.py and {n - 3:,} more")
    two = uploads.load(_zip(tmp_path / "two.zip", {f"a/{EX1}.py": "", f"b/{EX1}.py": ""}))
    assert two.problems[EX1] == (f"{EX1}: two candidate files at the same depth: a/{EX1}.py "
                                 f"and b/{EX1}.py")


def test_nothing_readable_is_an_error_naming_each_reason(tmp_path):
    path = _zip(tmp_path / "locked.zip", {f"{EX1}.py": "x = 1\n", f"{EX2}.ipynb": "{"})
    _patch(path, f"{EX1}.py", flags=0x1)
    loaded = uploads.load(path)
    assert not loaded.sources
    assert loaded.error == (f"no exercise file could be read: {EX1}.py: is encrypted "
                            "(password-protected): zip it again without a password; "
                            f"{EX2}.ipynb: not a readable notebook (NotJSONError)")


def test_a_folder_with_an_inner_archive_says_it_is_not_opened(tmp_path):
    (tmp_path / "sub").mkdir()
    _zip(tmp_path / "sub" / "work.zip", _solutions())
    loaded = uploads.load(tmp_path / "sub")
    assert loaded.error and "archives inside a submission are not opened" in loaded.error
    assert "work.zip" in loaded.error


def test_an_unforeseen_failure_is_that_submissions_error(tmp_path, monkeypatch):
    def boom(path, loaded, notebooks):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(uploads, "_read_folder", boom)
    loaded = uploads.load(tmp_path)
    assert loaded.error == ("the submission could not be read (RecursionError: maximum "
                            "recursion depth exceeded)")


def test_a_folders_hash_is_of_what_was_read(tmp_path):
    (tmp_path / f"{EX1}.py").write_bytes(b"x = 1\n")
    first = uploads.load(tmp_path).sha256
    (tmp_path / "unrelated.txt").write_bytes(b"anything")
    assert uploads.load(tmp_path).sha256 == first  # not graded, not hashed
    (tmp_path / f"{EX1}.py").write_bytes(b"x = 2\n")
    assert uploads.load(tmp_path).sha256 != first
    zipped = _zip(tmp_path / "s.zip", {f"{EX1}.py": "x = 1\n"})
    assert uploads.load(zipped).sha256 == hashlib.sha256(zipped.read_bytes()).hexdigest()


def test_a_students_own_folder_is_read_whatever_lies_beside_it(tmp_path):
    """`course check` reads the student's exercises/ with the batch's reader; its name names no
    output, so an exercises.zip beside it (the student zipped it once) is no rival upload."""
    from autograder.student import progress

    folder = tmp_path / "exercises"
    folder.mkdir()
    (folder / f"{EX1}.py").write_text("x = 1\n", "utf-8")
    _zip(tmp_path / "exercises.zip", {f"{EX1}.py": "x = 2\n"})
    assert uploads.load(folder).error  # as an upload of a class: its id is shared
    for loaded in (uploads.load(folder, named=False), progress.load_folder(folder)):
        assert (loaded.id, loaded.error, loaded.sources) == ("exercises", None, {EX1: b"x = 1\n"})
