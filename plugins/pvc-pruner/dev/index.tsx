import { createDevApp } from '@backstage/dev-utils';
import { pvcPrunerPlugin } from '../src/plugin';

createDevApp().registerPlugin(pvcPrunerPlugin).render();
