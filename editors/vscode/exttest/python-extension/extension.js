// The Python extension's environments API as agent_lsp uses it
// (api.environments.getActiveEnvironmentPath(resource) -> { id, path }).
// With no interpreter selected the real extension answers the bare "python";
// a test selects one by setting `selected`.
const api = {
  selected: undefined,
  environments: {
    getActiveEnvironmentPath(_resource) {
      const path = api.selected ?? 'python';
      return { id: path, path };
    },
  },
};

exports.activate = () => api;
exports.deactivate = () => undefined;
