# SPDX-License-Identifier: Apache-2.0
"""asdl_check.py — convert/python.asdl must describe exactly CPython 3.12's `ast`.

    python3.12 asdl_check.py PATH/convert/python.asdl

Every constructor of python.asdl must be an `ast` class with the same _fields (same
order) and _attributes, every concrete `ast` node class must appear in python.asdl,
and optional fields must default to None in `ast` as they do for us (ast.dump leaves
them out).
"""
import ast
import importlib.util
import os
import sys


def main():
    if sys.version_info[:2] != (3, 12):
        print("FAIL: must run under CPython 3.12", file=sys.stderr)
        return 2
    asdl_path = sys.argv[1]
    gen_path = os.path.join(os.path.dirname(asdl_path), "asdl_gen.py")
    spec = importlib.util.spec_from_file_location("asdl_gen", gen_path)
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    with open(asdl_path, encoding="utf-8") as f:
        types = gen.parse(f.read())
    errors = []
    ours = set()
    for t in types:
        base = getattr(ast, t.name, None)
        if base is None:
            errors.append("type %s is not in ast" % t.name)
        for c in t.ctors:
            ours.add(c.name)
            cls = getattr(ast, c.name, None)
            if cls is None:
                errors.append("%s is not in ast" % c.name)
                continue
            fields = tuple(f.name for f in c.fields)
            if cls._fields != fields:
                errors.append("%s fields %r, ast has %r" % (c.name, fields, cls._fields))
            attrs = tuple(a.name for a in t.attrs)
            if tuple(cls._attributes) != attrs:
                errors.append("%s attributes %r, ast has %r" % (c.name, attrs, cls._attributes))
            for f in c.fields + t.attrs:
                if f.opt and getattr(cls, f.name, "missing") is not None:
                    errors.append("%s.%s is optional here but has no None default" % (c.name, f.name))
    # every concrete node class of ast (excluding deprecated aliases) is described
    deprecated = {"Num", "Str", "Bytes", "NameConstant", "Ellipsis", "Index", "ExtSlice",
                  "Suite", "AugLoad", "AugStore", "Param", "slice"}
    for name in dir(ast):
        cls = getattr(ast, name)
        if (isinstance(cls, type) and issubclass(cls, ast.AST) and cls is not ast.AST
                and name not in deprecated and not name.startswith("_")
                and not cls.__subclasses__() and name not in ours):
            errors.append("ast.%s is missing from python.asdl" % name)
    print("python.asdl: %d types, %d constructors checked against ast" % (len(types), len(ours)))
    for e in errors:
        print("FAIL: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
