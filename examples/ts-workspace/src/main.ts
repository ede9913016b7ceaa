import { totalArea } from './shapes';

const square = { area: () => 4 };
const total: number = totalArea([square, square]);
console.log(total);
