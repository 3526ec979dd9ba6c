# -*- coding: shift_jis -*-
x = '�