% other comment
0 1 0.5
1 0
