import { totalArea } from './shapes';

const square = { area: () => 4 };
console.log(totalArea([square, square]));
