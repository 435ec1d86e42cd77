"""Two privmix builds side by side on Iris without a schema (DP ranges): 80/20 split
(random.Random(0)), synth on the 80 % at ε (argv[3], default 5) for seeds 1..20, logistic
regression (`privmix evaluate`) on the 20 %, and each numeric column's two-sample KS distance
between the synthetic rows and the training rows.

    python3 bench/utility/ranges_ab.py OLD_PRIVMIX NEW_PRIVMIX [EPS]
"""
import csv, json, os, random, subprocess, sys, tempfile, statistics as st
OLD, NEW = sys.argv[1], sys.argv[2]
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
eps=sys.argv[3] if len(sys.argv)>3 else '5'
res={'old':[], 'new':[]}
for seed in range(1,21):
    for name,b in (('old',OLD),('new',NEW)):
        out=os.path.join(TMP, f'{name}.csv')
        subprocess.run([b,'synth','--input',os.path.join(TMP,'tr.csv'),'--label','species','--epsilon',eps,'--delta','1e-5','--output',out,'--receipt',os.path.join(TMP,'r.json'),'--seed',str(seed)],capture_output=True,check=True)
        ev=json.loads(subprocess.run([b,'evaluate','--train',out,'--test',os.path.join(TMP,'te.csv'),'--label','species','--json'],capture_output=True,check=True).stdout)
        s=list(csv.reader(open(out)))[1:]
        k=[ks([float(x[j]) for x in tr],[float(x[j]) for x in s]) for j in range(4)]
        res[name].append((ev['accuracy'], k))
for name in res:
    acc=[a for a,_ in res[name]]; k=[x for _,x in res[name]]
    print(name, 'eps',eps,'acc mean %.3f min %.3f'%(st.mean(acc),min(acc)), 'KS per col', [round(st.mean(c[j] for c in k),3) for j in range(4)])
