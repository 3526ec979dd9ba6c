# coding: gbk
x = '�'
