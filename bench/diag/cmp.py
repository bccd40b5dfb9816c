import re,sys,collections
exec(open('d2.py').read().split("W={")[0])
O=sys.argv[1]
done=collections.defaultdict(list)
for e in ev:
    if e[5]==2: done[e[2]].append(e[3])
lost=collections.Counter(); ok=collections.Counter()
for l in open(O+'/trace.txt'):
    m=re.search(r'^\s*(.*?)-(\d+)\s+\[(\d+)\] (\S+)\s+(\d+)\.(\d+): block_io_done: \S+ \S+ \d+ \(\) (\d+)',l)
    if not m: continue
    t=int(m[5])*10**9+int(m[6])*1000; sec=int(m[7]); comm=m[1]; flags=m[4]
    k=(comm if comm.startswith('ksoftirqd') else 'other', flags)
    if any(abs(x-t)<200000 for x in done[sec]): ok[k]+=1
    else: lost[k]+=1; print('lost', l.strip()[:110])
print('ok',dict(ok)); print('lost',dict(lost))
