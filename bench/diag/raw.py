import sys
exec(open('an.py').read().split("print('stat busy")[0])
a,b=int(sys.argv[2]),int(sys.argv[3])
for e in ev:
    if a<=e[0]<=b: print('n%d %d.%06d span%d %s sec %d key %x cpu%d ca%d raw+%d used+%d' % (e[0],e[3]//10**9,e[3]%10**9//1000,e[9],'start' if e[7]==1 else 'done ',e[2],e[1]&0xffff,e[6],e[8],e[4]-e[3],e[5]-e[4]))
