# coding: gb18030
𠀀 = '𠀀😀'
