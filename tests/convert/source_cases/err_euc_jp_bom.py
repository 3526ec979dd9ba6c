# coding: euc-jp
x = 1
