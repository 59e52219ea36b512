#!/usr/bin/env python3
"""Availability and language-floor check for a Swift package built on Linux.

Run through Scripts/check-availability.sh (see --help there, or `python3 check.py --help`).

What it does, in four parts:

1. Symbol graphs.  `swift-symbolgraph-extract` is run on the toolchain's own modules (Swift, _Concurrency,
   Foundation, Testing, ...).  Their interfaces carry Apple availability (`@available(macOS 15, ...)`) even on
   Linux, and the graphs give each public symbol's USR with its `availability` entries.  The graphs are cached
   under <scratch>/availability/<toolchain key>/, and so is the index made from them.

2. References.  SwiftPM's build manifest (<scratch>/debug.yaml) gives each Swift module's compile command.  The
   same command, in dump mode (`-dump-ast -dump-ast-format json`, one frontend job per module), writes the
   type-checked AST of every source file.  Every `decl_ref` in it carries the referenced declaration's USR; type
   annotations and conformances are found through the mangled types of declarations and the explicit
   conformances of types.

3. Join.  A reference to a symbol introduced above the package's minimum on a declared Apple platform, or
   unavailable there, is an error, unless the reference lies in a range guarded by `if #available`,
   `guard #available`, the else branch of `if #unavailable`, or a declaration with `@available` that covers it,
   or unless an overload with the same signature is available at the minimums (Apple's compiler would pick that
   one).  References in `#if` branches that no Apple platform compiles are not reported.

4. Language floor.  A text scan (comments and string literals blanked) for language features newer than the
   package's oldest supported Swift; see LANGUAGE_FEATURES below, also printed by --help.

`#if` branches that only Apple platforms compile (canImport(Darwin), os(macOS), ...) are not in the Linux AST and
cannot be checked; they are listed at the end for a reviewer.
"""

from __future__ import annotations

import argparse
import bisect
import concurrent.futures
import dataclasses
import hashlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

APPLE_PLATFORMS = ("macOS", "iOS", "tvOS", "watchOS", "visionOS")
# `swift package dump-package` spells the platforms in lower case.
PLATFORM_NAMES = {p.lower(): p for p in APPLE_PLATFORMS}

# Toolchain modules whose graphs are always extracted: the standard library and the modules it implicitly
# imports, and the Foundation and concurrency modules a package of this kind uses.  Any other toolchain module
# that a checked source file imports is added (see EXTRA_MODULES_SKIPPED for those that are not).
BASE_MODULES = (
    "Swift", "_Concurrency", "_StringProcessing", "Synchronization", "Observation", "Dispatch",
    "FoundationEssentials", "FoundationInternationalization", "Foundation", "FoundationNetworking", "Testing",
)
# Imported toolchain modules that carry no Apple availability of their own: the C library (Glibc, Musl; its
# symbols are C declarations) and XCTest (swift-corelibs-xctest; on Apple platforms XCTest is another library).
EXTRA_MODULES_SKIPPED = {"Glibc", "Musl", "SwiftGlibc", "XCTest", "SwiftOnoneSupport"}

# The oldest Swift the package supports, and the language features newer than it that the text scan rejects:
# (name shown in errors, regular expression on source text with comments and string literals blanked).
LANGUAGE_FLOOR = "6.1"
LANGUAGE_FEATURES = (
    ("'weak let' (Swift 6.3, SE-0481)", r"\bweak\s+let\b"),
    ("'nonisolated(nonsending)' (Swift 6.2, SE-0461)", r"\bnonisolated\s*\(\s*nonsending\s*\)"),
    ("'@concurrent' (Swift 6.2, SE-0461)", r"@concurrent\b"),
    ("'InlineArray' (Swift 6.2, SE-0453; also macOS 26)", r"\bInlineArray\b"),
    ("InlineArray type sugar '[N of T]' (Swift 6.2, SE-0483)", r"\[\s*\d+\s+of\s+[A-Za-z_(\[]"),
    ("'Span' family (Swift 6.2, SE-0447/0467/0456; also macOS 26)",
     r"\b(?:Span|RawSpan|MutableSpan|MutableRawSpan|UTF8Span|OutputSpan|OutputRawSpan)\b"),
    ("'~Escapable' (Swift 6.2, SE-0446)", r"~\s*Escapable\b"),
    ("isolated conformance ': @MainActor P' (Swift 6.2, SE-0470)", r"[:,]\s*@MainActor\s+[A-Za-z_][\w.]*\s*(?:[{,]|where\b)"),
    ("raw identifier (Swift 6.2, SE-0451)", None),  # checked by raw_identifier_findings(), not by a regex
    ("'isolated deinit' (Swift 6.2, SE-0371)", r"\bisolated\s+deinit\b"),
    ("integer generic parameter '<let N: Int>' (Swift 6.2, SE-0452)",
     r"<\s*(?:[A-Za-z_]\w*\s*(?::\s*[\w.& ]+)?\s*,\s*)*let\s+[A-Za-z_]\w*\s*:\s*Int\b"),
    ("'@abi(...)' (Swift 6.2, SE-0476)", r"@abi\s*\("),
    ("'@c' attribute (Swift 6.3, SE-0495)", r"@c\b(?=\s|\()"),
    ("module selector 'Module::name' (Swift 6.3, SE-0491)", r"\b[A-Za-z_]\w*::[A-Za-z_`]"),
    ("Swift Testing exit tests '#expect(processExitsWith:)' (Swift 6.2)",
     r"#(?:expect|require)\s*\(\s*processExitsWith\s*:"),
    ("Swift Testing 'Attachment' (Swift 6.2)", r"\bAttachment\b"),
    ("Swift Testing 'Test.cancel(...)' (Swift 6.3)", r"\bTest(?:\.Case)?\.cancel\s*\("),
)


class CheckFailure(Exception):
    """The check itself could not run (not a finding): a tool failed, a file is missing or unreadable."""


def run(cmd: list[str], what: str, cwd: str | None = None, env: dict | None = None) -> str:
    """Runs cmd and returns its standard output; raises CheckFailure naming `what` and the tool's stderr."""
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as error:
        raise CheckFailure(f"{what}: cannot run {cmd[0]}: {error}") from error
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-30:])
        raise CheckFailure(f"{what}: `{' '.join(cmd[:3])} ...` exited with {proc.returncode}:\n{tail}")
    return proc.stdout


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------------------
# Versions and availability


def parse_version(text: str | dict | None) -> tuple[int, ...] | None:
    """'15', '15.0.1' or a symbol graph {'major': 15, 'minor': 0} as a comparable tuple (trailing zeros cut)."""
    if text is None:
        return None
    if isinstance(text, dict):
        parts = [text.get("major", 0), text.get("minor", 0), text.get("patch", 0)]
    else:
        parts = [int(p) for p in str(text).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def show_version(version: tuple[int, ...], minimum_parts: int = 2) -> str:
    parts = list(version) + [0] * (minimum_parts - len(version))
    return ".".join(str(p) for p in parts)


# An availability is a dict: platform -> ("introduced", version) or ("unavailable", None), for the Apple
# platforms it restricts.  Platforms it does not mention are unrestricted.


def visionos_from_ios(entry):
    """The visionOS availability that Swift infers from an iOS one when a declaration names no visionOS.

    The compiler lets visionOS inherit iOS availability; iOS 17 and older mean visionOS 1.0, and later iOS
    versions map to the visionOS of the same year (iOS 18 -> visionOS 2; iOS 26 -> visionOS 26)."""
    kind, version = entry
    if kind != "introduced":
        return entry
    major = version[0]
    if major <= 17:
        return ("introduced", (1,))
    if major < 26:
        return ("introduced", (major - 16,) + tuple(version[1:]))
    return ("introduced", version)


def graph_availability(entries: list[dict]) -> dict:
    """The Apple restrictions in a symbol graph `availability` list (the '*', Swift-version and macCatalyst
    domains are ignored).  `obsoleted` is kept as ("obsoleted", version) when there is no `introduced`, and
    alongside it otherwise."""
    result = {}
    for entry in entries or ():
        domain = entry.get("domain")
        if domain not in APPLE_PLATFORMS:
            continue
        if entry.get("isUnconditionallyUnavailable"):
            result[domain] = ("unavailable", None)
            continue
        introduced = parse_version(entry.get("introduced"))
        obsoleted = parse_version(entry.get("obsoleted"))
        if introduced is not None:
            result[domain] = ("introduced", introduced, obsoleted) if obsoleted else ("introduced", introduced)
        elif obsoleted is not None:
            result[domain] = ("obsoleted", obsoleted)
    if "visionOS" not in result and "iOS" in result:
        entry = result["iOS"]
        result["visionOS"] = visionos_from_ios(entry[:2]) if entry[0] == "introduced" else entry
    return result


def merge_with_parent(own: dict, parent: dict) -> dict:
    """A member's availability within its type or extension: the parent's restriction applies where the member
    has none, and where both have one the stricter wins (as the compiler treats nested availability)."""
    merged = dict(parent)
    for platform, entry in own.items():
        other = merged.get(platform)
        if other is None or other[0] != "introduced" or entry[0] != "introduced":
            if other is None or entry[0] == "unavailable" or other[0] != "unavailable":
                merged[platform] = entry
        else:
            merged[platform] = entry if entry[1] >= other[1] else other
    return merged


# --------------------------------------------------------------------------------------------------------------
# Toolchain


@dataclasses.dataclass
class Toolchain:
    swift: str
    swiftc: str
    symbolgraph_extract: str
    demangle: str
    version: str
    triple: str
    import_paths: list[str]

    @staticmethod
    def find() -> "Toolchain":
        swift = shutil.which("swift")
        if swift is None:
            raise CheckFailure("no `swift` on PATH")
        info = json.loads(run([swift, "-print-target-info"], "swift -print-target-info"))

        def tool(name: str) -> str:
            # xcrun where there is one (macOS), else the tool next to the real `swift` binary, else PATH.
            if shutil.which("xcrun"):
                try:
                    return run(["xcrun", "--find", name], f"xcrun --find {name}").strip()
                except CheckFailure:
                    pass
            beside = os.path.join(os.path.dirname(os.path.realpath(swift)), name)
            if os.access(beside, os.X_OK):
                return beside
            found = shutil.which(name)
            if found is None:
                raise CheckFailure(f"cannot find {name} in the toolchain of {swift}")
            return found

        paths = info.get("paths", {})
        import_paths = list(paths.get("runtimeLibraryImportPaths", []))
        resource = paths.get("runtimeResourcePath")
        if not import_paths and resource:
            import_paths = [os.path.join(resource, info["target"]["platform"])]
        if not import_paths:
            raise CheckFailure("swift -print-target-info gives no runtimeLibraryImportPaths")
        return Toolchain(
            swift=swift, swiftc=tool("swiftc"), symbolgraph_extract=tool("swift-symbolgraph-extract"),
            demangle=tool("swift-demangle"), version=info["compilerVersion"], triple=info["target"]["triple"],
            import_paths=import_paths)

    def module_path(self, module: str) -> str | None:
        for directory in self.import_paths:
            for suffix in (".swiftmodule", ".swiftinterface"):
                candidate = os.path.join(directory, module + suffix)
                if os.path.exists(candidate):
                    return candidate
        return None

    @property
    def cache_key(self) -> str:
        """A directory name per toolchain: its version and target, and a hash that also covers where it is."""
        match = re.search(r"version (\S+)", self.version)
        digest = hashlib.sha256(f"{self.version}\n{self.triple}\n{self.import_paths}".encode()).hexdigest()[:8]
        return f"swift-{match.group(1) if match else 'unknown'}-{self.triple}-{digest}"


# --------------------------------------------------------------------------------------------------------------
# Symbol graphs -> index of restricted symbols

INDEX_FORMAT = 3
TYPE_KINDS = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias"}


def extract_graphs(toolchain: Toolchain, modules: list[str], graph_root: str) -> None:
    """Extracts the graph of each module not yet cached, two at a time, each into a directory of its own (an
    extraction writes Module.symbols.json and one Module@Other.symbols.json per extended module; all are kept)."""
    missing = [m for m in modules if toolchain.module_path(m) is None]
    if missing:
        raise CheckFailure(f"toolchain module(s) not found in {toolchain.import_paths}: {', '.join(missing)}")
    todo = [m for m in modules if not os.path.exists(os.path.join(graph_root, m, ".complete"))]
    if not todo:
        return
    log(f"availability: extracting symbol graphs of {', '.join(todo)} (cached for the next run)")

    def extract(module: str) -> None:
        out = os.path.join(graph_root, module)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        cmd = [toolchain.symbolgraph_extract, "-module-name", module, "-target", toolchain.triple,
               "-minimum-access-level", "public", "-output-dir", out]
        for directory in toolchain.import_paths:
            cmd += ["-I", directory]
        run(cmd, f"symbol graph of {module}")
        if not any(name.endswith(".symbols.json") for name in os.listdir(out)):
            raise CheckFailure(f"symbol graph of {module}: swift-symbolgraph-extract wrote no graph in {out}")
        open(os.path.join(out, ".complete"), "w").close()

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for future in [pool.submit(extract, m) for m in todo]:
            future.result()


def signature_of(symbol: dict) -> str:
    """The declaration without its attributes: two overloads with the same signature differ only there."""
    fragments = symbol.get("declarationFragments") or []
    text = "".join(f["spelling"] for f in fragments if f.get("kind") != "attribute")
    text = re.sub(r"@\w+(\([^)]*\))?", "", text)  # attributes spelled as other fragment kinds
    return " ".join(text.split())


def build_index(toolchain: Toolchain, modules: list[str], graph_root: str) -> dict:
    """Reads every graph of `modules` and returns the index the join needs:

    restricted: usr -> {"title", "avail": {platform: entry}, "group": signature key}  (symbols with any Apple
                restriction after inheritance from their type or extension)
    groups:     signature key -> [usr, ...] of every symbol with that path and signature (overloads), only for
                keys that hold a restricted symbol and at least one other
    types:      demangled type key ("Module.Outer.Name") -> [usr] for restricted types (see type_keys())
    """
    symbols: dict[str, dict] = {}
    parents: dict[str, str] = {}
    for module in modules:
        directory = os.path.join(graph_root, module)
        for name in sorted(os.listdir(directory)):
            if not name.endswith(".symbols.json"):
                continue
            path = os.path.join(directory, name)
            try:
                with open(path) as f:
                    graph = json.load(f)
            except (OSError, ValueError) as error:
                raise CheckFailure(f"cannot read symbol graph {path}: {error}") from error
            for symbol in graph.get("symbols", []):
                usr = symbol["identifier"]["precise"]
                # A symbol can appear in several graphs (re-exports); keep the one with availability.
                if usr not in symbols or (symbol.get("availability") and not symbols[usr].get("availability")):
                    symbols[usr] = symbol
            for relation in graph.get("relationships", []):
                if relation.get("kind") in ("memberOf", "requirementOf", "optionalRequirementOf"):
                    parents.setdefault(relation["source"], relation["target"])

    effective: dict[str, dict] = {}

    def availability(usr: str, depth: int = 0) -> dict:
        if usr in effective:
            return effective[usr]
        symbol = symbols.get(usr)
        own = graph_availability(symbol.get("availability")) if symbol else {}
        parent = parents.get(usr)
        if parent and depth < 20:
            own = merge_with_parent(own, availability(parent, depth + 1))
        effective[usr] = own
        return own

    restricted, by_signature = {}, {}
    for usr, symbol in symbols.items():
        if "::SYNTHESIZED::" in usr:
            continue  # the AST refers to the protocol extension's USR, which is in the graph itself
        group = "/".join(symbol.get("pathComponents", [])) + "|" + signature_of(symbol)
        by_signature.setdefault(group, []).append(usr)
        avail = availability(usr)
        if avail:
            restricted[usr] = {"title": ".".join(symbol.get("pathComponents", [])) or usr, "avail": avail,
                               "group": group, "kind": symbol.get("kind", {}).get("identifier", "")}
    groups = {key: usrs for key, usrs in by_signature.items()
              if len(usrs) > 1 and any(u in restricted for u in usrs)}

    type_usrs = [u for u, r in restricted.items() if r["kind"] in TYPE_KINDS and u.startswith("s:")]
    manglings = {"$s" + u[2:] + "D": u for u in type_usrs}
    types: dict[str, list[str]] = {}
    for mangled, keys in type_keys(toolchain, list(manglings)).items():
        # The mangling of the type itself names exactly one nominal: the outermost key is the type's own.
        if keys:
            types.setdefault(keys[0], []).append(manglings[mangled])
    for r in restricted.values():
        del r["kind"]
    return {"format": INDEX_FORMAT, "toolchain": toolchain.version, "modules": sorted(modules),
            "restricted": restricted, "groups": groups, "types": types}


def load_index(toolchain: Toolchain, modules: list[str], cache: str) -> dict:
    graph_root = os.path.join(cache, "graphs")
    extract_graphs(toolchain, modules, graph_root)
    index_path = os.path.join(cache, "index.json")
    if os.path.exists(index_path):
        with open(index_path) as f:
            index = json.load(f)
        if index.get("format") == INDEX_FORMAT and set(modules) <= set(index.get("modules", [])):
            return index
    log("availability: indexing the symbol graphs (cached for the next run)")
    index = build_index(toolchain, modules, graph_root)
    with open(index_path + ".tmp", "w") as f:
        json.dump(index, f)
    os.replace(index_path + ".tmp", index_path)
    return index


# --------------------------------------------------------------------------------------------------------------
# Demangled types: which nominal types a mangled type names

NOMINAL_KINDS = {"Structure", "Class", "Enum", "Protocol", "TypeAlias", "OtherNominalType"}


class DemangleNode:
    __slots__ = ("kind", "text", "children")

    def __init__(self, kind: str, text: str | None):
        self.kind, self.text, self.children = kind, text, []


def parse_demangle_trees(output: str) -> dict[str, DemangleNode | None]:
    """Parses `swift-demangle --tree-only` output: 'Demangling for X' then indented 'kind=K, text="T"' lines."""
    trees: dict[str, DemangleNode | None] = {}
    current = None
    stack: list[tuple[int, DemangleNode]] = []
    line_re = re.compile(r'^( *)kind=([A-Za-z]+)(?:, (?:text|index)="?(.*?)"?)?$')
    for line in output.splitlines():
        if line.startswith("Demangling for "):
            current = line[len("Demangling for "):]
            trees[current] = None
            stack = []
            continue
        match = line_re.match(line)
        if not match or current is None:
            continue
        depth = len(match.group(1)) // 2
        node = DemangleNode(match.group(2), match.group(3))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            stack[-1][1].children.append(node)
        else:
            trees[current] = node
        stack.append((depth, node))
    return trees


def nominal_key(node: DemangleNode) -> str | None:
    """'Module.Outer.Name' for a nominal node: its first child is its context, its second its name."""
    if len(node.children) < 2:
        return None
    context, name = node.children[0], node.children[1]
    if name.kind != "Identifier":
        return None  # private or local declarations: never a toolchain symbol
    if context.kind == "Module":
        prefix = context.text
    elif context.kind in NOMINAL_KINDS:
        prefix = nominal_key(context)
    elif context.kind.startswith("BoundGeneric") and context.children and context.children[0].children:
        prefix = nominal_key(context.children[0].children[0])
    elif context.kind == "Extension" and len(context.children) >= 2:
        extended = context.children[1]
        if extended.kind == "Type" and extended.children:
            extended = extended.children[0]
        prefix = nominal_key(extended) if extended.kind in NOMINAL_KINDS else None
    else:
        prefix = None
    return f"{prefix}.{name.text}" if prefix else None


def type_keys(toolchain: Toolchain, manglings: list[str]) -> dict[str, list[str]]:
    """mangled type -> keys of every nominal type it names (outermost first).  One swift-demangle process."""
    if not manglings:
        return {}
    try:
        proc = subprocess.run([toolchain.demangle, "--tree-only"], input="\n".join(manglings) + "\n",
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as error:
        raise CheckFailure(f"cannot run {toolchain.demangle}: {error}") from error
    if proc.returncode != 0:
        raise CheckFailure(f"swift-demangle exited with {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    trees = parse_demangle_trees(proc.stdout)
    result = {}
    for mangled in manglings:
        tree = trees.get(mangled)
        if tree is None:
            raise CheckFailure(f"swift-demangle cannot demangle the type {mangled} (from an AST dump or a graph)")
        keys = []
        stack = [tree]
        while stack:
            node = stack.pop()
            if node.kind in NOMINAL_KINDS:
                key = nominal_key(node)
                if key:
                    keys.append(key)
            stack.extend(reversed(node.children))
        result[mangled] = keys
    return result


# --------------------------------------------------------------------------------------------------------------
# The package: platforms, modules and their compile commands


def declared_minimums(toolchain: Toolchain, package: str) -> tuple[dict[str, tuple[int, ...]], set[str]]:
    """The minimum of every Apple platform Package.swift declares, and the module names of its targets."""
    dump = json.loads(run([toolchain.swift, "package", "dump-package", "--package-path", package],
                          f"swift package dump-package ({package})"))
    minimums = {}
    for platform in dump.get("platforms") or []:
        name = PLATFORM_NAMES.get(platform.get("platformName", "").lower())
        if name:
            minimums[name] = parse_version(platform["version"])
    if not minimums:
        raise CheckFailure(f"{package}/Package.swift declares no Apple platform: nothing to check against")
    targets = {re.sub(r"[^A-Za-z0-9_]", "_", t["name"]) for t in dump.get("targets", [])}
    return minimums, targets


@dataclasses.dataclass
class SwiftModule:
    name: str
    args: list[str]  # the driver's arguments, without the executable
    sources: list[str]


# Driver options that produce outputs (or run the build's way) and that the AST dump must not pass on;
# the value is how many arguments follow the option.
DROPPED_OPTIONS = {
    "-emit-dependencies": 0, "-emit-module": 0, "-emit-module-path": 1, "-output-file-map": 1, "-incremental": 0,
    "-c": 0, "-enable-batch-mode": 0, "-serialize-diagnostics": 0, "-index-store-path": 1, "-parseable-output": 0,
    "-emit-objc-header": 0, "-emit-objc-header-path": 1, "-o": 1, "-whole-module-optimization": 0, "-wmo": 0,
    "-emit-library": 0, "-emit-executable": 0, "-num-threads": 1, "-emit-module-interface": 0,
    "-emit-module-interface-path": 1, "-emit-private-module-interface-path": 1, "-emit-symbol-graph": 0,
    "-emit-symbol-graph-dir": 1, "-emit-module-source-info-path": 1, "-emit-api-descriptor-path": 1,
    "-emit-const-values-path": 1, "-explicit-module-build": 0, "-j": 1,
}


def swift_modules(scratch: str, package: str) -> tuple[list[SwiftModule], set[str]]:
    """Every Swift module of the package in the build manifest, with the sources of it that are the package's
    own (the generated test runners under the scratch path are not); and the names of all modules the manifest
    compiles (those of dependencies too)."""
    manifest = os.path.join(scratch, "debug.yaml")
    try:
        with open(manifest) as f:
            text = f.read()
    except OSError as error:
        raise CheckFailure(f"no build manifest at {manifest} (run `swift build --build-tests` first): {error}")
    modules, names = [], set()
    block_re = re.compile(
        r"description: \"Compiling Swift Module '([^']+)'[^\n]*\"\n\s+args: (\[[^\n]*\])")
    package = os.path.realpath(package)
    scratch_real = os.path.realpath(scratch)
    for match in block_re.finditer(text):
        name, args = match.group(1), json.loads(match.group(2))
        names.add(name)
        expanded = []
        for arg in args[1:]:
            if arg.startswith("@"):  # a response file of sources
                with open(arg[1:]) as f:
                    # Quoted as a shell quotes (a path with a space is one argument).
                    expanded += shlex.split(f.read())
            else:
                expanded.append(arg)
        sources = [a for a in expanded if a.endswith(".swift") and not a.startswith("-")]
        own = [s for s in sources if os.path.realpath(s).startswith(package + os.sep)
               and not os.path.realpath(s).startswith(scratch_real + os.sep)]
        if own:
            modules.append(SwiftModule(name, expanded, own))
    if not modules:
        raise CheckFailure(f"{manifest} names no Swift module of {package}")
    return modules, names


def dump_module_ast(toolchain: Toolchain, module: SwiftModule, out_dir: str) -> dict[str, str]:
    """Runs the module's compile command in AST-dump mode; returns source -> JSON file.

    One driver invocation with every file a primary of one frontend job (batch mode, one batch), so the module
    is type-checked once; an output file map sends each file's dump to a file of its own."""
    args, i = [], 0
    while i < len(module.args):
        arg = module.args[i]
        if arg in DROPPED_OPTIONS:
            i += 1 + DROPPED_OPTIONS[arg]
            continue
        if re.fullmatch(r"-j\d+", arg):
            i += 1
            continue
        args.append(arg)
        i += 1
    outputs = {source: os.path.join(out_dir, f"{module.name}.{n}.json") for n, source in enumerate(module.sources)}
    # Sources of the module that are not the package's own still take part (they are in `args`); only the
    # package's files need a dump, but the map must name every primary the driver makes, so map all sources.
    file_map = {s: {"ast-dump": outputs.get(s, os.path.join(out_dir, f"{module.name}.other.{n}.json"))}
                for n, s in enumerate(a for a in args if a.endswith(".swift") and not a.startswith("-"))}
    map_path = os.path.join(out_dir, f"{module.name}.output-file-map.json")
    with open(map_path, "w") as f:
        json.dump(file_map, f)
    for output in outputs.values():
        if os.path.exists(output):
            os.remove(output)
    cmd = [toolchain.swiftc] + args + ["-dump-ast", "-dump-ast-format", "json", "-output-file-map", map_path,
                                      "-enable-batch-mode", "-driver-batch-count", "1", "-j1"]
    run(cmd, f"AST dump of module {module.name}")
    for source, output in outputs.items():
        if not os.path.exists(output) or os.path.getsize(output) == 0:
            raise CheckFailure(f"AST dump of module {module.name}: no dump written for {source}")
    return outputs


# --------------------------------------------------------------------------------------------------------------
# The AST of one file: references, guarded ranges, imports


@dataclasses.dataclass
class Reference:
    offset: int
    usr: str | None  # a declaration's USR, or None for a type reference (then `mangled` is set)
    name: str
    mangled: str | None = None
    member: str | None = None  # an enum case in a pattern (`case .x:`): the case of the type `mangled`


@dataclasses.dataclass
class Guard:
    start: int
    end: int  # inclusive: the offset of the last token of the guarded range
    platforms: dict  # platform -> ("introduced", version) or ("unavailable", None)
    what: str


# Keys under which a declaration (or a pattern, cast or type expression) carries a type the source spells out.
TYPE_KEYS_BY_KIND = {
    "pattern_typed": ("type",), "type_expr": ("type",), "typealias": ("type", "interface_type"),
    "conditional_checked_cast_expr": ("written_type",), "forced_checked_cast_expr": ("written_type",),
    "is_subtype_expr": ("written_type",), "coerce_expr": ("type",), "requirement": ("first_type", "second_type"),
}
DECL_TYPE_KEYS = ("interface_type", "result", "extended_type", "superclass_type", "underlying_type")


def availability_tokens(source: bytes, start: int, end: int) -> list[str]:
    """'#available' / '#unavailable' in source order between two offsets.  The JSON dump spells both kinds of
    condition as '#available', so the source tells them apart."""
    return re.findall(rb"#(available|unavailable)\b", source[start:end])


def guard_platforms(queries: list[dict]) -> dict:
    """#available(macOS 15, iOS 18, *) -> {macOS: introduced 15, iOS: introduced 18}.  No inference between
    platforms here (an iOS query does not raise the visionOS floor): the check errs on the side of reporting."""
    platforms = {}
    for query in queries:
        domain, version = query.get("domain"), query.get("version")
        if domain in APPLE_PLATFORMS and version:
            platforms[domain] = ("introduced", parse_version(version))
    return platforms


def attribute_platforms(attrs: list[dict]) -> dict:
    """The guard a declaration's @available attributes give its body."""
    platforms = {}
    for attr in attrs:
        if attr.get("_kind") != "available_attr":
            continue
        domain = attr.get("domain")
        if attr.get("unavailable"):
            if domain == "*":
                return {p: ("unavailable", None) for p in APPLE_PLATFORMS}
            if domain in APPLE_PLATFORMS:
                platforms[domain] = ("unavailable", None)
        elif domain in APPLE_PLATFORMS and attr.get("introduced"):
            platforms.setdefault(domain, ("introduced", parse_version(attr["introduced"])))
    return platforms


def scan_ast(tree: dict, source: bytes) -> tuple[list[Reference], list[Guard], set[str]]:
    """Walks a file's JSON AST without recursion (ASTs nest deeply)."""
    references, guards, imports = [], [], set()
    # (node, position of the nearest enclosing node with a range, end of the enclosing brace or file)
    stack = [(tree, 0, len(source))]
    while stack:
        node, position, scope_end = stack.pop()
        if isinstance(node, list):
            stack.extend((child, position, scope_end) for child in reversed(node))
            continue
        if not isinstance(node, dict):
            continue
        kind = node.get("_kind", "")
        if node.get("implicit") and kind.endswith("_decl"):
            # Declarations the compiler made (accessors of lazy properties, Codable conformances, ...) repeat
            # what the source says elsewhere, at the wrong place: skip them.
            continue
        span = node.get("range")
        if span and "buffer_id" in span:
            # Code a macro expanded (#expect, @Observable, ...): its offsets are in the expansion's own buffer.
            # What it refers to is checked (the compiler checks expansions too) at the place of the macro in the
            # file, the position inherited from the enclosing node; its own ranges guard nothing in the file.
            span = None
        if span:
            position = span["start"]
        if kind == "import_decl":
            imports.add(node.get("module_path", [""])[0])
        if kind == "brace_stmt" and span:
            scope_end = span["end"]

        # References to declarations.  A member reference's range starts at its base; its last token is the
        # member's name, which is where the compiler would point.
        decl = node.get("decl")
        if isinstance(decl, dict) and decl.get("decl_usr"):
            at = span["end"] if kind in ("member_ref_expr", "dynamic_member_ref_expr") and span else position
            references.append(Reference(at, decl["decl_usr"], decl.get("base_name", "")))
        # Explicit conformances of a type or extension (`class A: TaskExecutor`).
        inherits = node.get("inherits")
        if isinstance(inherits, dict):
            for conformance in inherits.get("conformances", []):
                if conformance.get("source_kind") == "explicit" and conformance.get("protocol"):
                    references.append(Reference(position, conformance["protocol"], ""))
            if inherits.get("superclass_type"):
                references.append(Reference(position, None, "", inherits["superclass_type"]))
        # Enum cases in patterns (`case .foo:`) carry no USR in the dump, only the case's name and the enum type.
        if kind == "pattern_enum_element" and isinstance(node.get("element"), dict) and node.get("type"):
            name = node["element"].get("base_name", {}).get("name")
            if name:
                references.append(Reference(position, None, name, node["type"], name))
        # Types spelled in declarations, patterns, casts and type expressions.
        keys = TYPE_KEYS_BY_KIND.get(kind) or (DECL_TYPE_KEYS if kind.endswith("_decl") or kind == "parameter"
                                              else ())
        for key in keys:
            value = node.get(key)
            if isinstance(value, str) and value.startswith("$s"):
                references.append(Reference(position, None, "", value))

        # Guarded ranges.
        if kind in ("if_stmt", "guard_stmt") and span:
            conditions = node.get("conditions") or []
            checks = [c for c in conditions if isinstance(c, dict) and c.get("_kind") == "#available"]
            if checks:
                body = node.get("then_stmt") if kind == "if_stmt" else node.get("body")
                head_end = body["range"]["start"] if body and body.get("range") else span["end"]
                spelled = availability_tokens(source, span["start"], head_end)
                if len(spelled) != len(checks):
                    raise CheckFailure(f"cannot match the availability conditions at offset {span['start']} "
                                       f"with the source ({len(checks)} in the AST, {len(spelled)} in the text)")
                for check, spelling in zip(checks, spelled):
                    platforms = guard_platforms(check.get("queries", []))
                    if not platforms:
                        continue
                    if kind == "if_stmt":
                        branch = node.get("then_stmt") if spelling == b"available" else node.get("else_stmt")
                        if branch and branch.get("range"):
                            guards.append(Guard(branch["range"]["start"], branch["range"]["end"], platforms,
                                                f"#{spelling.decode()}"))
                    elif spelling == b"available":  # the rest of the enclosing scope
                        guards.append(Guard(span["end"], scope_end, platforms, "guard #available"))
                    elif body and body.get("range"):  # guard #unavailable: its else body runs when available
                        guards.append(Guard(body["range"]["start"], body["range"]["end"], platforms,
                                            "guard #unavailable"))
        attrs = node.get("attrs")
        if isinstance(attrs, list) and span:
            platforms = attribute_platforms(attrs)
            if platforms:
                guards.append(Guard(span["start"], span["end"], platforms, "@available"))

        for key, child in node.items():
            if kind == "for_each_stmt" and key == "next_call":
                # `for await` calls the iterator's next(isolation:) (macOS 15 family) where the deployment target
                # has it, and next() otherwise: the compiler's choice, never an error.
                continue
            if isinstance(child, list) or (isinstance(child, dict) and child.get("_kind") != "decl_ref"):
                stack.append((child, position, scope_end))
    return references, guards, imports


# --------------------------------------------------------------------------------------------------------------
# #if blocks: which branches only Apple platforms compile, and which no Apple platform compiles

APPLE_ONLY_IMPORTS = {"Darwin", "ObjectiveC", "SwiftUI", "UIKit", "AppKit", "WatchKit", "Combine", "os", "OSLog",
                      "Network", "CoreFoundation", "Security", "CryptoKit", "System"}
NON_APPLE_IMPORTS = {"Glibc", "Musl", "Bionic", "Android", "WinSDK", "ucrt", "CRT", "WASILibc", "FoundationNetworking",
                     "FoundationXML"}


@dataclasses.dataclass
class ConditionalBlock:
    path: str
    first_line: int
    last_line: int
    condition: str  # the branch's own condition, or '#else of ...'
    apple: list[str]  # Apple platforms that compile the branch
    linux: bool  # whether Linux compiles it
    start: int = 0  # byte offsets of the branch
    end: int = 0
    imports_only: bool = False  # the branch holds nothing but imports (and comments)


def evaluate_condition(text: str, platform: str, linux_modules: set[str]) -> bool:
    """Evaluates an #if condition for `platform` ('Linux' or an Apple platform).  Atoms it does not know
    (compilation flags, compiler versions, features) count as true on every platform: they do not separate
    Linux from Apple."""

    def atom(match: re.Match) -> str:
        function, argument = match.group(1), match.group(2).strip()
        if function == "os":
            if platform == "Linux":
                value = argument == "Linux"
            else:
                value = argument == platform or (argument == "xrOS" and platform == "visionOS")
        elif function == "canImport":
            module = argument.split(",")[0].strip()
            if platform == "Linux":  # this host: glibc, so no Musl
                value = module in linux_modules or module not in APPLE_ONLY_IMPORTS | {"Musl"}
            else:
                value = module not in NON_APPLE_IMPORTS
        elif function == "_runtime":
            value = (argument == "_ObjC") != (platform == "Linux")
        elif function == "targetEnvironment":
            if argument == "simulator":
                value = platform in ("iOS", "tvOS", "watchOS", "visionOS")
            elif argument == "macCatalyst":
                value = platform == "iOS"
            else:
                value = True
        else:  # arch, compiler, swift, hasFeature, hasAttribute, ...
            value = True
        return " True " if value else " False "

    expression = re.sub(r"\b(os|canImport|_runtime|targetEnvironment|arch|compiler|swift|hasFeature|hasAttribute|"
                        r"_endian|_pointerBitWidth|_hasAtomicBitWidth)\s*\(([^)]*)\)", atom, text)
    expression = re.sub(r"\btrue\b", " True ", re.sub(r"\bfalse\b", " False ", expression))
    expression = re.sub(r"\b(?!True\b|False\b)[A-Za-z_]\w*\b", " True ", expression)  # compilation flags
    expression = expression.replace("&&", " and ").replace("||", " or ").replace("!", " not ")
    try:
        return bool(eval(expression, {"__builtins__": {}}, {}))  # only True/False/and/or/not/() remain
    except SyntaxError as error:
        raise CheckFailure(f"cannot evaluate #if condition {text!r}: {error}") from error


def conditional_blocks(path: str, display: str, linux_modules: set[str]) -> list[ConditionalBlock]:
    """The branches of every #if in a file (by a text scan of the directive lines)."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.decode("utf-8", errors="replace").splitlines(keepends=True)
    blocks, stack, offset = [], [], 0
    directive = re.compile(r"^\s*#(if|elseif|else|endif)\b(.*)$")
    for number, line in enumerate(lines, 1):
        match = directive.match(line)
        start_offset = offset
        offset += len(line.encode("utf-8"))
        if not match:
            continue
        word, rest = match.group(1), re.sub(r"//.*$", "", match.group(2)).strip()

        def close(frame, number=number, start_offset=start_offset):
            # A branch is compiled when every earlier condition of its chain is false and its own is true.
            own, earlier, begin, begin_offset = frame["branch"]
            expression = " && ".join([f"!({c})" for c in earlier] + ([f"({own})"] if own else [])) or "true"
            shown = own if own else "#else of " + " / ".join(earlier)
            apple = [p for p in APPLE_PLATFORMS if evaluate_condition(expression, p, linux_modules)]
            linux = evaluate_condition(expression, "Linux", linux_modules)
            body = blank_comments_and_strings(data[begin_offset:start_offset].decode("utf-8", errors="replace"))
            imports_only = all(re.match(r"\s*(@\w+\s+)*import\s", l) or not l.strip() for l in body.splitlines())
            blocks.append(ConditionalBlock(display, begin, number, shown, apple, linux, begin_offset, start_offset,
                                           imports_only))

        if word == "if":
            stack.append({"conditions": [rest], "branch": (rest, [], number, offset)})
        elif not stack:
            raise CheckFailure(f"{display}:{number}: #{word} without #if")
        elif word == "elseif":
            close(stack[-1])
            stack[-1]["branch"] = (rest, list(stack[-1]["conditions"]), number, offset)
            stack[-1]["conditions"].append(rest)
        elif word == "else":
            close(stack[-1])
            stack[-1]["branch"] = (None, list(stack[-1]["conditions"]), number, offset)
        else:
            close(stack[-1])
            stack.pop()
    if stack:
        raise CheckFailure(f"{display}: #if without #endif")
    return blocks


# --------------------------------------------------------------------------------------------------------------
# Language floor


def blank_comments_and_strings(text: str) -> str:
    """The source with comments and string literals (with their interpolations) replaced by spaces, keeping
    line breaks and offsets, so that the text checks see only code."""
    out = list(text)
    i, n = 0, len(text)

    def blank(a: int, b: int) -> None:
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            blank(i, j)
            i = j
        elif c == '"' or (c == "#" and re.match(r'#+"', text[i:i + 8])):
            hashes = 0
            while text[i + hashes] == "#":
                hashes += 1
            start = i
            j = i + hashes
            multiline = text.startswith('"""', j)
            quote = '"""' if multiline else '"'
            j += len(quote)
            closing = quote + "#" * hashes
            while j < n:
                if text[j] == "\\" and hashes == 0:
                    j += 2
                    continue
                if text.startswith(closing, j):
                    j += len(closing)
                    break
                if text[j] == "\n" and not multiline:
                    break
                j += 1
            blank(start, j)
            i = j
        else:
            i += 1
    return "".join(out)


@dataclasses.dataclass
class Finding:
    path: str
    line: int
    column: int
    symbol: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: error: {self.message}"


def raw_identifier_findings(code: str) -> list[tuple[int, str]]:
    found = []
    for match in re.finditer(r"`([^`\n]+)`", code):
        name = match.group(1)
        if not re.fullmatch(r"[A-Za-z_$][\w$]*", name):
            found.append((match.start(), name))
    return found


def language_floor_findings(path: str, display: str) -> list[Finding]:
    with open(path, encoding="utf-8") as f:
        code = blank_comments_and_strings(f.read())
    line_starts = [0] + [m.end() for m in re.finditer("\n", code)]
    findings = []

    def add(offset: int, feature: str) -> None:
        line = bisect.bisect_right(line_starts, offset)
        column = offset - line_starts[line - 1] + 1
        findings.append(Finding(display, line, column, feature,
                                f"{feature} is newer than the package's oldest supported Swift, {LANGUAGE_FLOOR}"))

    for feature, pattern in LANGUAGE_FEATURES:
        if pattern is None:
            continue
        for match in re.finditer(pattern, code):
            add(match.start(), feature)
    for offset, name in raw_identifier_findings(code):
        add(offset, "raw identifier (Swift 6.2, SE-0451)")
    return findings


# --------------------------------------------------------------------------------------------------------------
# The join


def needs(avail: dict, floors: dict, unavailable_guard: set) -> tuple[list[str], list[str]]:
    """What a symbol with availability `avail` lacks at `floors`: (['macOS 15.0', ...], ['iOS', ...])."""
    too_new, unavailable = [], []
    for platform, floor in floors.items():
        entry = avail.get(platform)
        if entry is None or platform in unavailable_guard:
            continue
        if entry[0] == "unavailable" or (entry[0] == "obsoleted" and entry[1] <= floor) or \
                (entry[0] == "introduced" and len(entry) > 2 and entry[2] <= floor):
            unavailable.append(platform)
        elif entry[0] == "introduced" and tuple(entry[1]) > floor:
            too_new.append(f"{platform} {show_version(tuple(entry[1]))}")
    return too_new, unavailable


def normalise(avail: dict) -> dict:
    """JSON turns version tuples into lists; compare them as tuples again."""
    return {p: tuple(tuple(x) if isinstance(x, list) else x for x in e) for p, e in avail.items()}


@dataclasses.dataclass
class Result:
    findings: list[Finding]
    overloads: list[str]
    guarded: list[str]  # "path:line: symbol" of references a guard covers
    skipped_linux_only: list[str]
    unchecked: list[ConditionalBlock]
    references: int
    files: int


def check_package(package: str, scratch: str, toolchain: Toolchain, verbose: bool,
                  language_paths: list[str], cache_root: str | None = None) -> Result:
    started = time.monotonic()
    package = os.path.realpath(package)
    minimums, target_modules = declared_minimums(toolchain, package)
    modules, built_modules = swift_modules(scratch, package)
    package_modules = built_modules | target_modules  # dependencies' modules and C targets too
    cache = os.path.join(cache_root or os.path.join(scratch, "availability"), toolchain.cache_key)
    os.makedirs(cache, exist_ok=True)
    ast_dir = tempfile.mkdtemp(prefix="ast-", dir=cache)
    try:
        # AST dumps, two modules at a time (the machine has two cores and each dump is one frontend job).
        dumps: dict[str, str] = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            for future in [pool.submit(dump_module_ast, toolchain, m, ast_dir) for m in modules]:
                dumps.update(future.result())
        if verbose:
            log(f"availability: dumped the ASTs of {len(modules)} modules in {time.monotonic() - started:.1f} s")

        per_file = {}
        imports: set[str] = set()
        for source, dump in sorted(dumps.items()):
            with open(source, "rb") as f:
                text = f.read()
            try:
                with open(dump) as f:
                    tree = json.load(f)
            except (OSError, ValueError) as error:
                raise CheckFailure(f"cannot parse the AST dump of {source} ({dump}): {error}") from error
            if tree.get("_kind") != "source_file":
                raise CheckFailure(f"the AST dump of {source} is not a source file's ({dump})")
            try:
                references, guards, file_imports = scan_ast(tree, text)
            except CheckFailure as error:
                raise CheckFailure(f"{source}: {error}") from error
            per_file[source] = (text, references, guards)
            imports |= file_imports
    finally:
        shutil.rmtree(ast_dir, ignore_errors=True)

    # Graphs: the base modules and every other toolchain module a file imports or a reference leads to (a USR
    # such as s:18_Testing_Foundation... names its module; cross-import overlays are imported implicitly).
    graph_modules = set(BASE_MODULES)
    referenced_modules = set()
    for _, references, _ in per_file.values():
        for reference in references:
            match = re.match(r"s:(\d+)", reference.usr or "")
            if match:
                length = int(match.group(1))
                referenced_modules.add(reference.usr[match.end():match.end() + length])
    for module in referenced_modules - package_modules - EXTRA_MODULES_SKIPPED:
        if toolchain.module_path(module):
            graph_modules.add(module)
    for module in imports - package_modules - EXTRA_MODULES_SKIPPED:
        if toolchain.module_path(module):
            graph_modules.add(module)
        elif module not in package_modules:
            raise CheckFailure(f"`import {module}` names neither a module of the package nor one of the "
                               f"toolchain in {toolchain.import_paths}")
    index = load_index(toolchain, sorted(graph_modules), cache)
    restricted, groups = index["restricted"], index["groups"]
    restricted_by_title: dict[str, list[str]] = {}
    for usr, info in restricted.items():
        restricted_by_title.setdefault(info["title"], []).append(usr)

    # Type references: demangle every distinct mangled type once.
    manglings = sorted({r.mangled for _, refs, _ in per_file.values() for r in refs if r.mangled})
    keys_of = type_keys(toolchain, manglings)

    linux_modules = package_modules | {m for m in imports if toolchain.module_path(m)} | {"Glibc", "Foundation"}
    findings: dict[tuple, Finding] = {}
    overloads, guarded, skipped, unchecked = [], [], [], []
    reference_count = 0
    for source, (text, references, guards) in sorted(per_file.items()):
        display = os.path.relpath(source, package)
        blocks = conditional_blocks(source, display, linux_modules)
        unchecked += [b for b in blocks if b.apple and not b.linux]
        linux_only = [b for b in blocks if b.linux and not b.apple]
        line_starts = [0] + [m.end() for m in re.finditer(rb"\n", text)]
        for reference in references:
            if reference.usr:
                usrs = [reference.usr]
            elif reference.member:
                # The enum is the outermost type of the pattern's type; its case by path ("Type.case").
                keys = keys_of.get(reference.mangled, [])
                enum_path = keys[0].split(".", 1)[1] if keys and "." in keys[0] else None
                usrs = restricted_by_title.get(f"{enum_path}.{reference.member}", []) if enum_path else []
            else:
                usrs = [u for key in keys_of.get(reference.mangled, []) for u in index["types"].get(key, [])]
            for usr in usrs:
                reference_count += 1
                info = restricted.get(usr)
                if info is None:
                    continue
                line = bisect.bisect_right(line_starts, reference.offset)
                column = reference.offset - line_starts[line - 1] + 1
                floors = dict(minimums)
                unavailable_guard = set()
                for guard in guards:
                    if guard.start <= reference.offset <= guard.end:
                        for platform, (kind, version) in guard.platforms.items():
                            if platform not in floors:
                                continue
                            if kind == "unavailable":
                                unavailable_guard.add(platform)
                            elif version > floors[platform]:
                                floors[platform] = version
                avail = normalise(info["avail"])
                too_new, unavailable = needs(avail, floors, unavailable_guard)
                if not too_new and not unavailable:
                    if any(needs(avail, dict(minimums), set())):
                        guarded.append(f"{display}:{line}: {info['title']}")
                    continue
                if any(b.start <= reference.offset < b.end for b in linux_only):
                    skipped.append(f"{display}:{line}: {info['title']}")
                    continue
                # An overload with the same path and signature that is available at the minimums is what
                # Apple's compiler picks; the Linux compiler picking the newer one is no error.
                alternatives = [u for u in groups.get(info["group"], []) if u != usr]
                if any(not any(needs(normalise(restricted[a]["avail"]), dict(minimums), set()))
                       if a in restricted else True for a in alternatives):
                    overloads.append(f"{display}:{line}: {info['title']}")
                    continue
                parts = []
                if too_new:
                    parts.append("needs " + ", ".join(too_new))
                if unavailable:
                    parts.append("is unavailable on " + ", ".join(unavailable))
                shown_minimums = ", ".join(f"{p} {show_version(v, 1)}" for p, v in minimums.items())
                message = f"'{info['title']}' {' and '.join(parts)} (declared minimums: {shown_minimums})"
                key = (display, line, info["title"])
                if key not in findings:
                    findings[key] = Finding(display, line, column, info["title"], message)

    # The language floor, on every Swift file of the checked directories (active on Linux or not).
    for directory in language_paths:
        root = os.path.join(package, directory)
        for folder, subfolders, files in os.walk(root):
            subfolders.sort()
            for name in sorted(files):
                if name.endswith(".swift"):
                    path = os.path.join(folder, name)
                    for finding in language_floor_findings(path, os.path.relpath(path, package)):
                        findings.setdefault((finding.path, finding.line, finding.symbol), finding)
    # Unchecked #if branches of files not compiled at all on Linux are found by walking the same directories.
    compiled = set(per_file)
    for directory in language_paths:
        root = os.path.join(package, directory)
        for folder, subfolders, files in os.walk(root):
            subfolders.sort()
            for name in sorted(files):
                path = os.path.realpath(os.path.join(folder, name))
                if name.endswith(".swift") and path not in compiled and \
                        not any(os.path.realpath(s) == path for s in compiled):
                    blocks = conditional_blocks(path, os.path.relpath(path, package), linux_modules)
                    unchecked += [b for b in blocks if b.apple and not b.linux]
    # A branch inside another unchecked branch is part of it.
    unchecked = [b for b in unchecked if not any(o is not b and o.path == b.path and o.start <= b.start and
                                                   b.end <= o.end for o in unchecked)]
    if verbose:
        log(f"availability: checked {reference_count} references in {len(per_file)} files "
            f"in {time.monotonic() - started:.1f} s")
    ordered = sorted(findings.values(), key=lambda f: (f.path, f.line, f.column, f.symbol))
    # A dump in which nothing refers to anything means the dump's format changed, not a clean module.
    for module in modules:
        if not any(per_file[source][1] for source in module.sources):
            raise CheckFailure(f"the AST dumps of module {module.name} hold no references at all: "
                               f"has the format of `-dump-ast-format json` changed?")
    return Result(ordered, sorted(set(overloads)), sorted(set(guarded)), sorted(set(skipped)), unchecked,
                  reference_count, len(per_file))


def print_unchecked(blocks: list[ConditionalBlock]) -> None:
    code = sorted((b for b in blocks if not b.imports_only), key=lambda b: (b.path, b.first_line))
    imports = sorted((b for b in blocks if b.imports_only), key=lambda b: (b.path, b.first_line))
    print(f"\nNot checked: {len(blocks)} #if branches that only Apple platforms compile "
          f"(read them against Apple's SDK); {len(code)} with code:")
    for block in code:
        print(f"  {block.path}:{block.first_line}-{block.last_line}: {block.condition} "
              f"[{', '.join(block.apple)}]")
    if imports:
        print(f"and {len(imports)} with imports only:")
        for block in imports:
            print(f"  {block.path}:{block.first_line}-{block.last_line}: {block.condition} "
                  f"[{', '.join(block.apple)}]")


# --------------------------------------------------------------------------------------------------------------
# Self-test


def self_test(toolchain: Toolchain, here: str, scratch_root: str, verbose: bool) -> int:
    fixture = os.path.join(here, "Fixture")
    scratch = os.path.join(scratch_root, "availability", "fixture-build")
    log(f"availability: building the fixture package ({fixture}) in {scratch}")
    run([toolchain.swift, "build", "--package-path", fixture, "--scratch-path", scratch],
        "swift build of the fixture package")
    # FloorSamples/ is no target's: only the language-floor scan reads it.
    result = check_package(fixture, scratch, toolchain, verbose, ["Sources", "FloorSamples"],
                           cache_root=os.path.join(scratch_root, "availability"))
    for finding in result.findings:
        print(finding)
    got = {f"{f.path}:{f.line}: {f.symbol}" for f in result.findings}
    with open(os.path.join(fixture, "expected.txt")) as f:
        expected = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    missing, extra = sorted(expected - got), sorted(got - expected)
    for line in missing:
        print(f"self-test: MISSING (expected, not reported): {line}")
    for line in extra:
        print(f"self-test: UNEXPECTED (reported, not expected): {line}")
    # The guarded uses must have been seen and excused by their guard (or as an overload), not missed.
    with open(os.path.join(fixture, "expected-excused.txt")) as f:
        expected_excused = {line.strip() for line in f if line.strip() and not line.startswith("#")}
    excused = {f"guarded {line}" for line in result.guarded} | {f"overload {line}" for line in result.overloads} | \
        {f"linux-only {line}" for line in result.skipped_linux_only}
    for line in sorted(expected_excused - excused):
        print(f"self-test: NOT SEEN AS EXCUSED: {line}")
    for line in sorted(excused - expected_excused):
        print(f"self-test: EXCUSED BUT NOT LISTED in expected-excused.txt: {line}")
    missing += sorted(expected_excused ^ excused)
    expected_unchecked = 1
    if len(result.unchecked) != expected_unchecked:
        print(f"self-test: expected {expected_unchecked} unchecked #if branch, got {len(result.unchecked)}")
    print_unchecked(result.unchecked)
    if missing or extra or len(result.unchecked) != expected_unchecked:
        print("self-test: FAILED")
        return 1
    print(f"self-test: passed ({len(expected)} expected errors reported, none else; "
          f"{len(expected_excused)} guarded uses and overloads seen and excused)")
    return 0


def main() -> int:
    features = "\n".join(f"  - {name}" for name, _ in LANGUAGE_FEATURES)
    parser = argparse.ArgumentParser(
        prog="check-availability.sh",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Reports uses of Apple APIs newer than the package's declared minimum platforms, using the "
                    "availability in the Swift toolchain's own modules and the type-checked AST of every "
                    "module of the package (run `swift build --build-tests` first), and uses of Swift "
                    f"language features newer than Swift {LANGUAGE_FLOOR}.",
        epilog=f"Language features rejected (text scan, comments and string literals skipped):\n{features}\n\n"
               "Not checked: #if branches only Apple platforms compile (listed at the end), and APIs that\n"
               "Linux's Foundation has but Apple's has not or with other availability.")
    parser.add_argument("--package-path", default=".", help="the package (default: the current directory)")
    parser.add_argument("--scratch-path", help="its build directory (default: PACKAGE/.build)")
    parser.add_argument("--verbose", action="store_true",
                        help="also print excused overload resolutions, skipped Linux-only branches, timings")
    parser.add_argument("--list-unchecked", action="store_true",
                        help="only list the #if branches that only Apple platforms compile")
    parser.add_argument("--self-test", action="store_true",
                        help="build the fixture package next to this script and check that exactly the "
                             "expected errors are reported")
    options = parser.parse_args()
    started = time.monotonic()
    package = os.path.realpath(options.package_path)
    scratch = os.path.realpath(options.scratch_path or os.path.join(package, ".build"))
    here = os.path.dirname(os.path.realpath(__file__))
    try:
        toolchain = Toolchain.find()
        if options.self_test:
            return self_test(toolchain, here, scratch, options.verbose)
        language_paths = [d for d in ("Sources", "Tests", "Benchmarks") if os.path.isdir(os.path.join(package, d))]
        if options.list_unchecked:
            blocks = []
            for directory in language_paths:
                for folder, subfolders, files in os.walk(os.path.join(package, directory)):
                    subfolders.sort()
                    for name in sorted(files):
                        if name.endswith(".swift"):
                            path = os.path.join(folder, name)
                            blocks += [b for b in conditional_blocks(path, os.path.relpath(path, package), set())
                                       if b.apple and not b.linux]
            blocks = [b for b in blocks if not any(o is not b and o.path == b.path and o.start <= b.start and
                                                   b.end <= o.end for o in blocks)]
            print_unchecked(blocks)
            return 0
        result = check_package(package, scratch, toolchain, options.verbose, language_paths)
    except CheckFailure as error:
        print(f"check-availability: error: {error}", file=sys.stderr)
        return 2
    for finding in result.findings:
        print(finding)
    if options.verbose:
        for line in result.overloads:
            print(f"note: {line} (an overload with the same signature is available at the minimums)")
        for line in result.guarded:
            print(f"note: {line} (guarded)")
        for line in result.skipped_linux_only:
            print(f"note: {line} (in an #if branch no Apple platform compiles)")
    print_unchecked(result.unchecked)
    print(f"\n{len(result.findings)} error(s); {result.references} references in {result.files} files checked; "
          f"{len(result.overloads)} overload resolution(s) excused (--verbose lists them); "
          f"{time.monotonic() - started:.0f} s")
    return 1 if result.findings else 0


if __name__ == "__main__":
    sys.exit(main())
