# Unicode 15 identifier characters (XID tables follow CPython 3.12)
𑼄x = 1
𞀰 = 2
x𑽁 = 3
