# \N{...} with names and formal aliases (Unicode 15 names)
a = '\N{BYTE ORDER MARK}\N{nul}\N{LATIN SMALL LETTER GHA}\N{LINE FEED}\N{zwnj}'
b = '\N{KANNADA LETTER LLLA}\N{CJK UNIFIED IDEOGRAPH-31350}\N{ARABIC SMALL FARSI YEH}'
c = b'x' + '\N{HANGUL SYLLABLE GAG}'.encode()
