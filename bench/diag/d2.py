import json,struct,sys
O=sys.argv[1]
d=json.load(open(O+'/dbg2.json'))
ev=[]
for e in d:
    k=int(''.join(x[2:] for x in reversed(e['key'])),16)
    b=bytes(int(x,16) for x in e['value'])
    key,sec,t,cpu,what,sk,found,acct,iss,arm=struct.unpack('<QQQIIQBBBB4x',b)
    if t==0: continue
    ev.append((k,key,sec,t,cpu,what,found,acct,iss,arm))
ev.sort()
W={1:'io_start',2:'io_done',3:'rq_issue',4:'rq_cmpl'}
# find first request whose io_start has no io_done before the next io_start with same key
last={}
for e in ev:
    if e[5]==1: last[e[1]]=e
    if e[5]==2: last.pop(e[1],None)
# find problematic: io_start with found&acct=1
for e in ev:
    if e[5]==1 and e[6] and e[7]==1:
        print('restart on busy slot:', e); 
        sec=None
import collections
bysec=collections.defaultdict(list)
for e in ev: bysec[e[2]].append(e)
tgt=int(sys.argv[2]) if len(sys.argv)>2 else None
if tgt:
    for e in bysec[tgt]: print(W[e[5]], 'key %x'%(e[1]&0xffff), e[3], 'cpu',e[4],'found',e[6],'acct',e[7],'iss',e[8],'armed',e[9])
