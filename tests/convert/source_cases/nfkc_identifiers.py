# NFKC of whole identifiers (composition across characters)
é = 1
각 = 2
ậ = 3
Å = 4
ẛ̣ = 5
ﬁ́ = 6
x̧́ = é + é
