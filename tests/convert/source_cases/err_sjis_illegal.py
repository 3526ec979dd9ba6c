# coding: shift_jis
x = 1
y = '�'
