#!gsparse num_dst=4 num_src=6
5 0 1.5
0 3 -2
