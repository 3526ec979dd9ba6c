# coding: cp932
s = '①②Ⅸ～'
def 関数(引数='表'):
    return 引数 * 2
