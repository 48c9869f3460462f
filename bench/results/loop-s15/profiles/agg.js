// usage: node agg.js profile marker [lines]
const fs=require('fs');const p=JSON.parse(fs.readFileSync(process.argv[2]));const marker=process.argv[3];const showLines=process.argv[4];
const byId=new Map(p.nodes.map(n=>[n.id,n]));const parent=new Map();for(const n of p.nodes)for(const c of n.children||[])parent.set(c,n.id);
const dt=p.timeDeltas;const has=new Map();
function hasMarker(id){if(has.has(id))return has.get(id);const n=byId.get(id);let r=n.callFrame.functionName===marker;if(!r&&parent.has(id))r=hasMarker(parent.get(id));has.set(id,r);return r;}
const self=new Map();const incl=new Map();let total=0;
for(let i=0;i<p.samples.length;i++){const id=p.samples[i];const t=(dt[i+1]??0)/1000;if(!hasMarker(id))continue;total+=t;const n=byId.get(id);const k=n.callFrame.functionName+' '+n.callFrame.url.replace(/.*dist\//,'')+':'+(n.callFrame.lineNumber+1);self.set(k,(self.get(k)||0)+t);
const seen=new Set();let c=id;while(c!==undefined){const m=byId.get(c);const kk=m.callFrame.functionName+' '+m.callFrame.url.replace(/.*dist\//,'')+':'+(m.callFrame.lineNumber+1);if(!seen.has(kk)){seen.add(kk);incl.set(kk,(incl.get(kk)||0)+t);}c=parent.get(c);}}
console.log('total',total.toFixed(1));
console.log('--self');for(const [k,v] of [...self].sort((a,b)=>b[1]-a[1]).slice(0,30))console.log(v.toFixed(1).padStart(8),k);
console.log('--incl');for(const [k,v] of [...incl].sort((a,b)=>b[1]-a[1]).slice(0,60))console.log(v.toFixed(1).padStart(8),k);
if(showLines){const lines=new Map();for(const n of p.nodes){if(n.callFrame.functionName!==showLines||!n.positionTicks)continue;if(!hasMarker(n.id))continue;for(const pt of n.positionTicks)lines.set(pt.line,(lines.get(pt.line)||0)+pt.ticks);}console.log('--lines of',showLines,[...lines].sort((a,b)=>b[1]-a[1]).slice(0,15));}
