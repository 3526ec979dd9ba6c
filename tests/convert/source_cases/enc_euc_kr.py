# coding: euc-kr
한국어 = '안녕하세요'
