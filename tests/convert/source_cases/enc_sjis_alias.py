# coding: SJIS
x = 'ａｂｃ'  # trail bytes in the ASCII range: \ @ [
ｘ = 'ソ表能'
