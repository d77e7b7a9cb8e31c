0 1
1 2
2 0
# comment

3 3
