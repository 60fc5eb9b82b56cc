// Placeholder until the full app lands: lists projects from the API.
const main = document.getElementById('main');
fetch('/api/projects').then(r => r.json()).then(ps => {
  main.textContent = '';
  const ul = document.createElement('ul');
  for (const p of ps) { const li = document.createElement('li'); li.textContent = p.name; ul.append(li); }
  main.append(ul);
}).catch(e => { main.textContent = 'Could not load projects: ' + e.message; });
