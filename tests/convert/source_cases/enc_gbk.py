#!/usr/bin/env python
# coding=gbk
中文 = '汉字'
lambda 参数: 参数 + '中'
