# vim: set fileencoding=euc-jp :
あ = 'いろは'
class 日本語:
    属性 = b'bytes'
