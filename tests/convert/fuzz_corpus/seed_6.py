try:
    pass
except* (A, B) as e:
    raise X from e
finally:
    pass
