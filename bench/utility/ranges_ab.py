"""Two privmix builds side by side on Iris without a schema (DP ranges): 80/20 split
(random.Random(0)), synth on the 80 % at ε for seeds 1..20 (a seed on which a build fails,
e.g. a class below the DP label threshold at small ε, is skipped for all), logistic
regression (`privmix evaluate`) on the 20 %, and each numeric column's two-sample KS distance
between the synthetic rows and the training rows.

    python3 bench/utility/ranges_ab.py EPS PRIVMIX [PRIVMIX ...]
"""
import csv, json, os, random, subprocess, sys, tempfile, statistics as st
eps, BINS = sys.argv[1], sys.argv[2:]
HERE = os.path.dirname(os.path.abspath(__file__))
rows=list(csv.reader(open(os.path.join(HERE, '../../demo/iris.csv')))); h=rows[0]; body=rows[1:]
TMP = tempfile.mkdtemp()
random.Random(0).shuffle(body)
tr, te = body[:120], body[120:]
def w(p, rs):
    with open(p,'w',newline='') as f: csv.writer(f).writerows([h]+rs)
w(os.path.join(TMP,'tr.csv'), tr); w(os.path.join(TMP,'te.csv'), te)
def ks(a,b):
    a=sorted(a); b=sorted(b); xs=sorted(set(a+b)); import bisect
    return max(abs(bisect.bisect_right(a,x)/len(a)-bisect.bisect_right(b,x)/len(b)) for x in xs)
res={b: [] for b in BINS}
skipped=0
for seed in range(1,21):
    row={}
    for b in BINS:
        out=os.path.join(TMP, 'out.csv')
        r=subprocess.run([b,'synth','--input',os.path.join(TMP,'tr.csv'),'--label','species','--epsilon',eps,'--delta','1e-5','--output',out,'--receipt',os.path.join(TMP,'r.json'),'--seed',str(seed)],capture_output=True)
        if r.returncode != 0:
            break  # e.g. a class below the DP label threshold at small ε: the seed is skipped for every build
        ev=json.loads(subprocess.run([b,'evaluate','--train',out,'--test',os.path.join(TMP,'te.csv'),'--label','species','--json'],capture_output=True,check=True).stdout)
        s=list(csv.reader(open(out)))[1:]
        k=[ks([float(x[j]) for x in tr],[float(x[j]) for x in s]) for j in range(4)]
        row[b]=(ev['accuracy'], k)
    if len(row) < len(BINS):
        skipped+=1
        continue
    for b in BINS:
        res[b].append(row[b])
for b in BINS:
    acc=[a for a,_ in res[b]]; k=[x for _,x in res[b]]
    print(f'eps {eps} {b}: {len(acc)} seeds ({skipped} skipped), accuracy mean %.3f min %.3f'%(st.mean(acc),min(acc)), 'KS per column', [round(st.mean(c[j] for c in k),3) for j in range(4)])
