def f(a, /, b=1, *c, d, **e) -> int:
    return [i for i in c if i]
