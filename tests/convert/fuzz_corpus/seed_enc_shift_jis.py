# -*- coding: shift_jis -*-
# source encodings decoded via iconv: offsets are UTF-8 offsets of the decoded text
x = '日本語\\ ~ ﾃｽﾄ'  # コメント
日本 = {'ソ': x}
print(日本['ソ'], f'{x!r:>10}')
