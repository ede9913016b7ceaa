// A stand-in for the Python extension (ms-python.python) in toolgate's end-to-end tests: the part of its API that
// toolgate uses (environments.getActiveEnvironmentPath, resolveEnvironment, onDidChangeActiveEnvironmentPath), and a
// command that selects another interpreter, as the real "Python: Select Interpreter" does.
const vscode = require('vscode');

exports.activate = function activate(context) {
  const changes = new vscode.EventEmitter();
  // The interpreter selected at start: one that does not exist, so toolgate has something to complain about.
  let active = { id: 'initial', path: '/nonexistent/fake-python/bin/python' };
  context.subscriptions.push(
    changes,
    vscode.commands.registerCommand('fakePython.selectInterpreter', async () => {
      const path = await vscode.window.showInputBox({ title: 'Fake Python: interpreter path', ignoreFocusOut: true });
      if (!path) return;
      active = { id: path, path };
      changes.fire({ id: path, path, resource: undefined });
    }),
  );
  return {
    environments: {
      getActiveEnvironmentPath: () => active,
      resolveEnvironment: async (environment) => {
        const path = typeof environment === 'string' ? environment : environment.path;
        return { executable: { uri: vscode.Uri.file(path) } };
      },
      onDidChangeActiveEnvironmentPath: changes.event,
    },
  };
};

exports.deactivate = function deactivate() {};
