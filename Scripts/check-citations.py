#!/usr/bin/env python3
"""Checks that every file of this repository cited in a document or a comment exists.

    Scripts/check-citations.sh               # the repository; exit 1 naming each broken citation
    Scripts/check-citations.sh --self-test   # proves on a small made-up tree that it finds what it must

Where citations are looked for:
- every line of the Markdown documents: README.md, CONTRIBUTING.md and the other top-level ones,
  Benchmarks/**/*.md and the DocC articles (Sources/**/*.md), code blocks included;
- the comment lines (`//`, `///`) of every Swift file (Sources, Tests, Benchmarks, Fuzz, Package.swift) and
  the comment lines (`#`) of the scripts (Scripts/*.sh, Scripts/**/*.py, .ci/run).

What is a citation:
- a name or path ending in a source extension (.swift, .sh, .py, .c, .h, .md, .yml): `Store.swift`,
  `Internal/Store.swift`, `Tests/CodableDefaultsTests/ModifyTests.swift`, `Defaults+*.swift` (a glob);
- a path that starts with a top-level folder of the repository (`Scripts/demo.sh`, `.ci/run`,
  `Tests/CodableDefaultsTestSupport`, `Benchmarks/Results/full-run.txt`), whatever its extension: a file or a
  folder;
- either may end with `:LINE` or `:FIRST-LAST`.
A name that is not a path into the repository is not a citation: an absolute path (`/etc/x/defaults.json`),
a path under `.build/`, a URL, a header in angle brackets (`<sys/inotify.h>`), a template
(`<Name>Command.swift`), a bare name with another
extension (`settings.json`, an example's file), a path whose first folder this repository has nowhere
(xnu's `bsd/vfs/kpi_vfs.c`), and the few files of other projects listed in OTHER_PROJECTS below.

When it is broken:
- a bare name must be the name of some file of the repository (a glob, of at least one);
- a path must be the path of a file of the repository, or of a folder holding one, or end one (a suffix of
  whole components: `Internal/Store.swift` ends `Sources/CodableDefaults/Internal/Store.swift`);
- a line, or the last line of a range, must be within the length of at least one file the name matches,
  and a range must not run backwards.

The files of the repository are what `git ls-files` lists, tracked or new and not ignored (every file under
the root when it is not a git work tree).
"""

import fnmatch
import os
import re
import subprocess
import sys
import tempfile

SOURCE_EXTENSIONS = ("swift", "sh", "py", "c", "h", "md", "yml")

# Files of other projects that comments cite by a name or path this repository could also have: each is
# checked against that project by whoever cites it, not here. A path into a folder this repository does not
# have (xnu's `bsd/vfs/kpi_vfs.c`, `sys/fcntl.h`) needs no entry.
OTHER_PROJECTS = {
    "Tests/Foundation/TestUserDefaults.swift": "swift-corelibs-foundation, Foundation's tests of UserDefaults",
    "spawn.h": "the C library's header of posix_spawn",
}

# A name or path: letters, digits and `_ . + - * /`; not preceded by what would make it part of a longer path, a
# URL, an absolute path, a variable, a header name, or a template (`<Name>Command.swift`).
_CANDIDATE = re.compile(
    r"(?<![\w./~$<>@*+-])"
    r"(?P<path>\.?[\w+*-][\w.+*-]*(?:/[\w.+*-]+)*/?)"
    r"(?::(?P<first>\d+)(?:-(?P<last>\d+))?)?"
)
_SOURCE_NAME = re.compile(r"\.(?:" + "|".join(SOURCE_EXTENSIONS) + r")$")


def repository_files(root):
    """The repository's files, as paths relative to `root` with `/`."""
    try:
        listed = subprocess.run(
            ["git", "-C", root, "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            check=True,
            capture_output=True,
        ).stdout.decode("utf-8", "surrogateescape")
        names = [name for name in listed.split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        names = []
        for folder, folders, files in os.walk(root):
            folders[:] = [f for f in folders if f not in (".git", ".build")]
            for name in files:
                names.append(os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/"))
    # A file listed but deleted in the work tree is not there to cite.
    return sorted(name for name in names if os.path.isfile(os.path.join(root, name)))


def citing_lines(root, files):
    """Yields (path, line number, text) for each line that may cite a file: documents whole, code's comments."""
    for name in files:
        lower = name.lower()
        top = name.split("/", 1)[0]
        if lower.endswith(".md"):
            if "/" in name and top not in ("Benchmarks", "Sources"):
                continue
            comment = None
        elif lower.endswith(".swift"):
            if top not in ("Sources", "Tests", "Benchmarks", "Fuzz") and name != "Package.swift":
                continue
            comment = re.compile(r"^\s*///?(.*)$|^.*?\S\s+//\s(.*)$")
        elif (top == "Scripts" and (lower.endswith(".sh") or lower.endswith(".py"))) or name == ".ci/run":
            comment = re.compile(r"^\s*#(?!!)(.*)$|^.*?\S\s+#\s(.*)$")
        else:
            continue
        with open(os.path.join(root, name), encoding="utf-8", errors="replace") as text:
            for number, line in enumerate(text, 1):
                if comment is None:
                    yield name, number, line
                else:
                    found = comment.match(line)
                    if found:
                        yield name, number, found.group(1) if found.group(1) is not None else found.group(2)


def citations(text, top_folders):
    """The citations in `text`: (what was written, path, first line or None, last line or None)."""
    for found in _CANDIDATE.finditer(text):
        path = found.group("path")
        written = found.group(0)
        end = found.end()
        # Sentence punctuation after a path (`see Scripts/demo.sh.`) is not part of it.
        while path.endswith(".") and not (found.group("first")):
            path = path[:-1]
            written = written[:-1]
        if not path or path in (".", ".."):
            continue
        if end < len(text) and text[end] in "(" and "/" not in path:
            continue  # a call, `main.swift(`: not prose; a path never is followed by `(`
        if text[end : end + 3] == "://":
            continue  # a URL's scheme
        stripped = path.rstrip("/")
        first_component = stripped.split("/", 1)[0]
        rooted = "/" in path and first_component in top_folders
        if stripped.startswith(".build/") or first_component == ".build":
            continue
        if not rooted and not _SOURCE_NAME.search(stripped):
            continue
        first = int(found.group("first")) if found.group("first") else None
        last = int(found.group("last")) if found.group("last") else first
        yield written, stripped, first, last


def line_count(root, name, cache):
    if name not in cache:
        with open(os.path.join(root, name), "rb") as data:
            content = data.read()
        cache[name] = content.count(b"\n") + (0 if content.endswith(b"\n") or not content else 1)
    return cache[name]


def resolve(path, files, by_name, folders):
    """The files `path` names (empty when it names none), or None when it names a folder."""
    if path.startswith("./"):
        path = path[2:]
    if "*" in path:
        if "/" in path:
            return [f for f in files if fnmatch.fnmatchcase(f, path) or fnmatch.fnmatchcase(f, "*/" + path)]
        return [f for f in files if fnmatch.fnmatchcase(f.rsplit("/", 1)[-1], path)]
    if "/" not in path:
        matches = by_name.get(path, [])
    else:
        matches = [f for f in files if f == path or f.endswith("/" + path)]
    if matches:
        return matches
    if path in folders or any(folder.endswith("/" + path) for folder in folders):
        return None
    return []


def elsewhere(path, folder_names):
    """Whether `path` is another project's file, not one of this repository's."""
    if path in OTHER_PROJECTS:
        return True
    first = path.split("/", 1)[0]
    # A path into a folder this repository has nowhere, at any depth (xnu's `bsd/vfs/kpi_vfs.c`, `sys/socket.h`).
    return "/" in path and first not in folder_names and not first.startswith("*")


def check(root):
    """The broken citations under `root`, as messages `path:line: ...`."""
    files = repository_files(root)
    by_name = {}
    folders = set()
    for name in files:
        by_name.setdefault(name.rsplit("/", 1)[-1], []).append(name)
        parts = name.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            folders.add("/".join(parts[:i]))
    top_folders = {name.split("/", 1)[0] for name in files if "/" in name}
    folder_names = {folder.rsplit("/", 1)[-1] for folder in folders}
    lengths = {}
    problems = []
    count = 0
    for citing, number, text in citing_lines(root, files):
        for written, path, first, last in citations(text, top_folders):
            if elsewhere(path, folder_names):
                continue
            count += 1
            matches = resolve(path, files, by_name, folders)
            where = f"{citing}:{number}: `{written}`"
            if matches is None:
                if first is not None:
                    problems.append(f"{where}: a line of a folder")
                continue
            if not matches:
                kind = "no file matches the pattern" if "*" in path else "no such file"
                problems.append(f"{where}: {kind} in the repository")
                continue
            if first is None:
                continue
            if first < 1 or last < first:
                problems.append(f"{where}: not a range of lines")
                continue
            longest = max(line_count(root, name, lengths) for name in matches)
            if last > longest:
                shown = matches[0] if len(matches) == 1 else f"{len(matches)} files named so"
                problems.append(f"{where}: line {last} is past the end ({shown}: {longest} lines)")
    return problems, count


def self_test():
    """Builds a small tree with citations good and broken, and checks that exactly the broken ones are found."""
    files = {
        "README.md": (
            "Run `Scripts/demo.sh`, see `.ci/run` and [the article](Sources/Lib/Docs.docc/Guide.md).\n"
            "The store is in `Store.swift:3` and `Internal/Store.swift:1-4`; the parts in `Store+*.swift`.\n"
            "Examples name files of their own: settings.json, /etc/app/defaults.json, <sys/inotify.h>.\n"
            "Broken: `Missing.swift`, `Internal/Gone.swift`, `Store.swift:9`, `Scripts/nothing.sh`.\n"
            "Broken: `Store.swift:4-2`, `Tests/NoSuchFolder`, `Nothing+*.swift`, `Store.swift:2-9`.\n"
        ),
        "Sources/Lib/Internal/Store.swift": (
            "/// The store; see `Store+Reading.swift` and `Tests/LibTests` (a folder).\n"
            "// Broken: `Storage.swift:121` (no Storage.swift here).\n"
            'let name = "Absent.swift"  // a string is code, not a citation: Absent.swift is, in this comment\n'
            "struct Store {}\n"
        ),
        "Sources/Lib/Internal/Store+Reading.swift": (
            "// Other projects' files: xnu's `bsd/vfs/kpi_vfs.c`, `sys/fcntl.h`, spawn.h.\n"
            "// Templates: Sources/<t>/main.swift, <Name>Command.swift.\n"
            "extension Store {}\n"
        ),
        "Sources/Lib/Docs.docc/Guide.md": "See `Internal/Store.swift:4`, not `Internal/Store.swift:5`.\n",
        "Tests/LibTests/StoreTests.swift": "// Tests `Store.swift`.\nlet x = 1\n",
        "Scripts/demo.sh": "#!/usr/bin/env bash\n# The README's main job (README.md), see Scripts/gone.sh.\n",
        ".ci/run": "#!/usr/bin/env bash\n# Runs Scripts/demo.sh.\n",
    }
    expected = [
        "README.md:4: `Missing.swift`: no such file in the repository",
        "README.md:4: `Internal/Gone.swift`: no such file in the repository",
        "README.md:4: `Store.swift:9`: line 9 is past the end (Sources/Lib/Internal/Store.swift: 4 lines)",
        "README.md:4: `Scripts/nothing.sh`: no such file in the repository",
        "README.md:5: `Store.swift:4-2`: not a range of lines",
        "README.md:5: `Tests/NoSuchFolder`: no such file in the repository",
        "README.md:5: `Nothing+*.swift`: no file matches the pattern in the repository",
        "README.md:5: `Store.swift:2-9`: line 9 is past the end (Sources/Lib/Internal/Store.swift: 4 lines)",
        "Scripts/demo.sh:2: `Scripts/gone.sh`: no such file in the repository",
        "Sources/Lib/Docs.docc/Guide.md:1: `Internal/Store.swift:5`: line 5 is past the end "
        "(Sources/Lib/Internal/Store.swift: 4 lines)",
        "Sources/Lib/Internal/Store.swift:2: `Storage.swift:121`: no such file in the repository",
        "Sources/Lib/Internal/Store.swift:2: `Storage.swift`: no such file in the repository",
        "Sources/Lib/Internal/Store.swift:3: `Absent.swift`: no such file in the repository",
    ]
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(name)), exist_ok=True)
            with open(os.path.join(root, name), "w", encoding="utf-8") as out:
                out.write(text)
        problems, count = check(root)
    if sorted(problems) != sorted(expected):
        print("check-citations: self-test FAILED", file=sys.stderr)
        for line in sorted(set(expected) - set(problems)):
            print(f"  not found: {line}", file=sys.stderr)
        for line in sorted(set(problems) - set(expected)):
            print(f"  found, not expected: {line}", file=sys.stderr)
        return 1
    print(f"check-citations: self-test OK: {len(expected)} broken citations found among {count}, and nothing else")
    return 0


def main(arguments):
    if arguments == ["--self-test"]:
        return self_test()
    if arguments:
        print("usage: check-citations.sh [--self-test]", file=sys.stderr)
        return 2
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems, count = check(root)
    if problems:
        print("check-citations: citations of files that are not there:", file=sys.stderr)
        for problem in problems:
            print(f"  {problem}", file=sys.stderr)
        print(f"check-citations: {len(problems)} of {count} citations broken", file=sys.stderr)
        return 1
    print(f"check-citations: OK: {count} citations of files in documents and comments, all there")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
