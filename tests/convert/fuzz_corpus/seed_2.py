class A[T](B, metaclass=M):
    x: int = 1
