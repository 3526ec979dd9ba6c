match p:
    case [1, *r] | {"k": _, **kw} if r:
        pass
    case C(x=1) as y:
        pass
