import json,struct,sys,re,collections
O=sys.argv[1]
st=json.load(open(O+'/stat.json'))['devices'][0]
fr,to=st['window_start_ns'],st['window_end_ns']
d=json.load(open(O+'/dbg.json'))
ev=[]
for e in d:
    k=int(''.join(x[2:] for x in reversed(e['key'])),16)
    b=bytes(int(x,16) for x in e['value'])
    key,sec,te,tr,tu,cpu,evt,ca,span,_=struct.unpack('<QQQQQIBBBB',b)
    if te==0: continue
    ev.append((k,key,sec,te,tr,tu,cpu,evt,ca,span))
ev.sort()
tr=[]
for l in open(O+'/trace.txt'):
    m=re.search(r'\[(\d+)\] \S+\s+(\d+)\.(\d+): block_io_(start|done): \S+ \S+ \d+ \(\) (\d+)',l)
    if m: tr.append((int(m[2])*10**9+int(m[3])*1000, m[4]=='start', int(m[5]), int(m[1]), l.split()[0]))
tr.sort()
def union(evs):
    busy=0;c=0;last=fr
    for t,s in evs:
        t=min(max(t,fr),to)
        if c>0: busy+=t-last
        last=t
        if s: c+=1
        elif c>0: c-=1
    if c>0: busy+=to-last
    return busy
tu=union([(t,s) for t,s,_,_,_ in tr])
print('stat busy %.3f%% trace %.3f%% ratio %.3f  window %.3fs' % (100*st['busy_ns']/st['window_ns'],100*tu/st['window_ns'],st['busy_ns']/max(tu,1),st['window_ns']/1e9))
acct=[e for e in ev if e[9]==0]
print('acct events', len(acct), 'count_after>=2:', sum(1 for e in acct if e[8]>=2))
# per-request tracker spans keyed by sector (sequence)
open_={}; spans=[]
for e in acct:
    n,key,sec,te,trw,tus,cpu,evt,ca,span=e
    if evt==1: open_[(key,sec)]=e
    else:
        s=open_.pop((key,sec),None)
        spans.append((s,e))
topen={}; tsp={}
for t,s,sec,cpu,comm in tr:
    if s: topen[sec]=(t,cpu,comm)
    elif sec in topen: tsp.setdefault(sec,[]).append((topen.pop(sec),(t,cpu,comm)))
bad=0
for s,e in spans:
    if s is None: print('done without start', e); continue
    sec=s[2]
    if sec not in tsp: continue
    (ts,cs,_),(td,cd,cm)=min(tsp[sec],key=lambda p:abs(p[0][0]-s[3]))
    kspan=e[3]-s[3]; tspan=td-ts
    if kspan-tspan>30000 or s[5]-s[3]>30000 or e[5]-e[3]>30000:
        bad+=1
        if bad<=15: print('sec %d key %x  kspan %.0fus tspan %.0fus | start: entry-trace %+.0fus raw-entry %.0f used-raw %.0f cpu%d ca%d | done: entry-trace %+.0fus raw-entry %.0f used-raw %.0f cpu%d ca%d  trace cpus %d/%d %s' % (sec,s[1],kspan/1e3,tspan/1e3,(s[3]-ts)/1e3,(s[4]-s[3])/1e3,(s[5]-s[4])/1e3,s[6],s[8],(e[3]-td)/1e3,(e[4]-e[3])/1e3,(e[5]-e[4])/1e3,e[6],e[8],cs,cd,cm))
print('bad', bad, 'of', len(spans))
