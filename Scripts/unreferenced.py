#!/usr/bin/env python3
"""Lists the declarations under Sources that nothing references, read from the compiler's index store.

usage: python3 Scripts/unreferenced.py [--tests] [--public]
  after `swift build --build-tests` (which writes the index to .build/debug/index/store).

Each line: FILE:LINE: NAME -- the declaration's line. Without --tests, a declaration counts as referenced when
any source or test file names it; with --tests, only when a source file does (what the tests alone use). Public
declarations (the API, used by clients) are listed only with --public. Not listed: parameters, extensions,
deinitializers, implicit declarations (memberwise initializers), and declarations that implement a protocol
requirement or are accessors. Still listed, and to be read: a protocol witness in an extension other than the
conformance's (the index does not relate them), and code only a Darwin branch uses (the Linux build does not
index it). The index is read with the toolchain's libIndexStore, through ctypes; nothing is written.
"""
import ctypes, os, shutil, sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STORE = os.path.join(ROOT, '.build/debug/index/store')
def library():
    swift = shutil.which('swift')
    candidates = [os.path.join(os.path.dirname(os.path.realpath(swift)), '../lib/libIndexStore.so')] if swift else []
    for path in candidates + ['libIndexStore.so']:
        try:
            return ctypes.CDLL(path)
        except OSError:
            continue
    sys.exit('unreferenced.py: the toolchain has no libIndexStore.so')
lib = library()

class SRef(ctypes.Structure):
    _fields_ = [('data', ctypes.c_char_p), ('length', ctypes.c_size_t)]
def s(ref):
    return ctypes.string_at(ref.data, ref.length).decode() if ref.data else ''

vp = ctypes.c_void_p
lib.indexstore_store_create.restype = vp
lib.indexstore_store_create.argtypes = [ctypes.c_char_p, ctypes.POINTER(vp)]
UnitCB = ctypes.CFUNCTYPE(ctypes.c_bool, vp, SRef)
lib.indexstore_store_units_apply_f.argtypes = [vp, ctypes.c_uint, vp, UnitCB]
lib.indexstore_unit_reader_create.restype = vp
lib.indexstore_unit_reader_create.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(vp)]
DepCB = ctypes.CFUNCTYPE(ctypes.c_bool, vp, vp)
lib.indexstore_unit_reader_dependencies_apply_f.argtypes = [vp, vp, DepCB]
for f in ['indexstore_unit_dependency_get_filepath', 'indexstore_unit_dependency_get_name',
          'indexstore_unit_reader_get_main_file', 'indexstore_symbol_get_usr', 'indexstore_symbol_get_name']:
    getattr(lib, f).restype = SRef
    getattr(lib, f).argtypes = [vp]
lib.indexstore_unit_dependency_get_kind.restype = ctypes.c_int
lib.indexstore_unit_dependency_get_kind.argtypes = [vp]
lib.indexstore_record_reader_create.restype = vp
lib.indexstore_record_reader_create.argtypes = [vp, ctypes.c_char_p, ctypes.POINTER(vp)]
OccCB = ctypes.CFUNCTYPE(ctypes.c_bool, vp, vp)
lib.indexstore_record_reader_occurrences_apply_f.argtypes = [vp, vp, OccCB]
lib.indexstore_occurrence_get_symbol.restype = vp
lib.indexstore_occurrence_get_symbol.argtypes = [vp]
lib.indexstore_occurrence_get_roles.restype = ctypes.c_uint64
lib.indexstore_occurrence_get_roles.argtypes = [vp]
lib.indexstore_occurrence_get_line_col.argtypes = [vp, ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)]
lib.indexstore_symbol_get_kind.restype = ctypes.c_int
lib.indexstore_symbol_get_kind.argtypes = [vp]
RelCB = ctypes.CFUNCTYPE(ctypes.c_bool, vp, vp)
lib.indexstore_occurrence_relations_apply_f.argtypes = [vp, vp, RelCB]
lib.indexstore_symbol_relation_get_roles.restype = ctypes.c_uint64
lib.indexstore_symbol_relation_get_roles.argtypes = [vp]

err = vp()
store = lib.indexstore_store_create(STORE.encode(), ctypes.byref(err))
if not store:
    sys.exit(f'unreferenced.py: no index at {STORE}: run swift build --build-tests first')
units = []
lib.indexstore_store_units_apply_f(store, 0, None, UnitCB(lambda c, n: units.append(s(n)) or True))

records = {}  # record name -> source path
for unit in units:
    reader = lib.indexstore_unit_reader_create(store, unit.encode(), ctypes.byref(err))
    if not reader: continue
    main = s(lib.indexstore_unit_reader_get_main_file(reader))
    if not main.startswith(ROOT + '/') or not os.path.exists(main): continue
    def dep(c, d):
        if lib.indexstore_unit_dependency_get_kind(d) == 2:
            path = s(lib.indexstore_unit_dependency_get_filepath(d))
            if path.startswith(ROOT + '/') and os.path.exists(path):
                records[s(lib.indexstore_unit_dependency_get_name(d))] = path
        return True
    lib.indexstore_unit_reader_dependencies_apply_f(reader, None, DepCB(dep))

DEF, REF, IMPLICIT = 1 << 1, 1 << 2, 1 << 8
OVERRIDE, ACCESSOR = 1 << 11, 1 << 15
defs = {}
refs = defaultdict(int)
source_refs = defaultdict(int)
overrides = set()
for name, path in records.items():
    reader = lib.indexstore_record_reader_create(store, name.encode(), ctypes.byref(err))
    if not reader: continue
    def occ(c, o):
        sym = lib.indexstore_occurrence_get_symbol(o)
        usr = s(lib.indexstore_symbol_get_usr(sym))
        roles = lib.indexstore_occurrence_get_roles(o)
        if roles & DEF and not roles & IMPLICIT:
            line, col = ctypes.c_uint(), ctypes.c_uint()
            lib.indexstore_occurrence_get_line_col(o, ctypes.byref(line), ctypes.byref(col))
            defs.setdefault(usr, (path, line.value, s(lib.indexstore_symbol_get_name(sym)),
                                  lib.indexstore_symbol_get_kind(sym)))
            def rel(c, r):
                if lib.indexstore_symbol_relation_get_roles(r) & (OVERRIDE | ACCESSOR): overrides.add(usr)
                return True
            lib.indexstore_occurrence_relations_apply_f(o, None, RelCB(rel))
        elif roles & REF:
            refs[usr] += 1
            if '/Sources/' in path: source_refs[usr] += 1
        return True
    lib.indexstore_record_reader_occurrences_apply_f(reader, None, OccCB(occ))

ONLY_TESTS = '--tests' in sys.argv
PUBLIC = '--public' in sys.argv
count = 0
for usr, (path, line, name, kind) in sorted(defs.items(), key=lambda x: (x[1][0], x[1][1])):
    if (source_refs[usr] if ONLY_TESTS else refs[usr]) or usr in overrides or '/Sources/' not in path: continue
    if kind in (0, 9, 23, 25) or name in ('body', 'main', 'CodingKeys'): continue
    text = open(path, errors='replace').read().split('\n')[line - 1] if line else ''
    if ('public ' in text or 'open ' in text) and not PUBLIC: continue
    count += 1
    print(f'{os.path.relpath(path, ROOT)}:{line}: {name} -- {text.strip()[:100]}')
print(f'{count} unreferenced declarations', file=sys.stderr)
