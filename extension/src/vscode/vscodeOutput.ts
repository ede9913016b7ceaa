/** The sidecar's output channel: the `vscode` side of the log the extension and the sidecar write to. */

import * as vscode from 'vscode';

/**
 * The sidecar's output channel, keeping the last lines of the sidecar's stderr: when the sidecar dies, they usually
 * say why, and the chat shows them. The language client copies stderr with `append`; its own messages come with
 * `appendLine` and are logged but not kept.
 */
export class SidecarOutput implements vscode.OutputChannel {
  private tail: string[] = [];
  private partial = '';

  constructor(
    private readonly channel: vscode.OutputChannel,
    private readonly keep = 40,
  ) {}

  get name(): string {
    return this.channel.name;
  }

  recent(): string {
    return [...this.tail, this.partial].filter((line) => line.trim() !== '').join('\n');
  }

  /** A new sidecar process starts: what an earlier one said no longer explains anything. */
  forgetRecent(): void {
    this.tail = [];
    this.partial = '';
  }

  /** A line from the extension itself: logged, but not taken for the sidecar's own words. */
  note(line: string): void {
    this.channel.appendLine(line);
  }

  append(value: string): void {
    this.channel.append(value);
    this.record(value);
  }

  appendLine(value: string): void {
    this.channel.appendLine(value);
  }

  replace(value: string): void {
    this.channel.replace(value);
  }

  clear(): void {
    this.channel.clear();
  }

  show(columnOrPreserve?: vscode.ViewColumn | boolean, preserveFocus?: boolean): void {
    if (typeof columnOrPreserve === 'boolean') this.channel.show(columnOrPreserve);
    else this.channel.show(columnOrPreserve, preserveFocus);
  }

  hide(): void {
    this.channel.hide();
  }

  dispose(): void {
    this.channel.dispose();
  }

  private record(text: string): void {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    this.tail.push(...lines);
    if (this.tail.length > this.keep) this.tail = this.tail.slice(-this.keep);
  }
}

export function createOutputChannel(name: string): vscode.OutputChannel {
  return vscode.window.createOutputChannel(name);
}
