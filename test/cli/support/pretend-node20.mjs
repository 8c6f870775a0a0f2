// Preloaded (--import) into a child: the process says it is Node.js 20, as an old install would.
Object.defineProperty(process, 'version', { value: 'v20.19.2' });
