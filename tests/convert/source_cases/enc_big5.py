# -*- coding: big5 -*-
名稱 = '繁體中文'
assert 名稱, '錯誤'
