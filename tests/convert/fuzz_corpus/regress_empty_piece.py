print(f"{x,Ϳ(f"{x,Ϳnt(f"{x!r:{w}})
