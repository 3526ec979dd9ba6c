# coding: cp1255
x = "אש"
