#!gsparse num_dst=2 num_src=2
2 0
