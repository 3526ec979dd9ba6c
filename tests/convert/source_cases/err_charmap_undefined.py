# coding: cp1253
x = "ª"
