x = b"\x00" + "\N{BULLET}" + r"\d" + 0x_ff + 1_000.5e-3j
