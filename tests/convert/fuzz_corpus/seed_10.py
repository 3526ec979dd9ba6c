type A[*Ts, **P] = tuple[*Ts]
global g
del a[0], b.c
