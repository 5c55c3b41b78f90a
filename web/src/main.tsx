import { render } from 'preact';
import { App } from './app.tsx';
import { followIdentity } from './api/identity.ts';
import './styles.css';

followIdentity();
render(<App />, document.getElementById('app')!);
