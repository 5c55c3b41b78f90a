// The rule lives with the server's (the CLI names projects alike); the bundle takes this pure module.
export { projectName } from '../../../core/project-name.ts';
