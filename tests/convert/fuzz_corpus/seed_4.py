print(f"{x!r:>{w}} {y=} {"q"}" "t")
