import sys
exec(open('an.py').read().split("print('stat busy")[0])
acct=[e for e in ev if e[9]==0]
idx=[i for i,e in enumerate(acct) if e[8]>=2]
shown=0
for i in idx[:3]:
    lo=acct[max(0,i-3)][3]-50000; hi=acct[min(len(acct)-1,i+3)][3]+50000
    print('---')
    rows=[(e[3],'K',e) for e in acct[max(0,i-3):i+4]]+[(t,'T',(t,s,sec,cpu,comm)) for t,s,sec,cpu,comm in tr if lo<=t<=hi]
    for t,k,e in sorted(rows,key=lambda r:r[0]):
        if k=='K': print('K %d.%06d n%d %s sec %d key %x cpu%d ca%d raw+%d used+%d' % (e[3]//10**9,e[3]%10**9//1000,e[0],'start' if e[7]==1 else 'done ',e[2],e[1]&0xffff,e[6],e[8],e[4]-e[3],e[5]-e[4]))
        else: print('T %d.%06d      %s sec %d cpu%d %s' % (t//10**9,t%10**9//1000,'start' if e[1] else 'done ',e[2],e[3],e[4]))
