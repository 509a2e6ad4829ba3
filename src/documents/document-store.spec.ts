import { AppError } from '../common/errors';
import { Transitions } from './document-store';
import { failure } from '../../test/support/failure';

// Only Transitions: DocumentStore reads and writes the database (e2e specs cover it).

type Status = 'draft' | 'shipped' | 'received' | 'cancelled';
type Action = 'change' | 'ship' | 'receive' | 'cancel' | 'reopen';

const TRANSFER = new Transitions<Status, Action>('Transfer order', {
  change: { from: ['draft'] },
  ship: { from: ['draft'], to: 'shipped' },
  receive: { from: ['shipped'], to: 'received' },
  cancel: { from: ['draft', 'shipped'], to: 'cancelled' },
  reopen: { from: [] },
});


describe('Transitions', () => {
  it('keeps what it was built with', () => {
    expect(TRANSFER.what).toBe('Transfer order');
    expect(TRANSFER.table.ship).toEqual({ from: ['draft'], to: 'shipped' });
  });

  describe('allows', () => {
    it('is true exactly for the states listed in `from`', () => {
      expect(TRANSFER.allows('ship', 'draft')).toBe(true);
      expect(TRANSFER.allows('ship', 'shipped')).toBe(false);
      expect(TRANSFER.allows('ship', 'received')).toBe(false);
      expect(TRANSFER.allows('receive', 'shipped')).toBe(true);
      expect(TRANSFER.allows('receive', 'draft')).toBe(false);
    });

    it('allows every state of a multi-state `from`, and nothing else', () => {
      expect(TRANSFER.allows('cancel', 'draft')).toBe(true);
      expect(TRANSFER.allows('cancel', 'shipped')).toBe(true);
      expect(TRANSFER.allows('cancel', 'received')).toBe(false);
      expect(TRANSFER.allows('cancel', 'cancelled')).toBe(false);
    });

    it('matches states exactly (no case folding, no prefixes, unknown states refused)', () => {
      expect(TRANSFER.allows('ship', 'Draft')).toBe(false);
      expect(TRANSFER.allows('ship', 'draf')).toBe(false);
      expect(TRANSFER.allows('ship', 'draft ')).toBe(false);
      expect(TRANSFER.allows('ship', '')).toBe(false);
      expect(TRANSFER.allows('ship', 'archived')).toBe(false);
    });

    it('an action with no `from` states is allowed from nowhere', () => {
      for (const s of ['draft', 'shipped', 'received', 'cancelled']) expect(TRANSFER.allows('reopen', s)).toBe(false);
    });
  });

  describe('check', () => {
    it('returns quietly when the action is allowed', () => {
      expect(() => TRANSFER.check('ship', 'draft', 'TO-000001')).not.toThrow();
      expect(() => TRANSFER.check('cancel', 'shipped', 'TO-000001')).not.toThrow();
      expect(TRANSFER.check('change', 'draft', 'TO-000001')).toBeUndefined();
    });

    it('throws 409 invalid_state naming the document, its number, the state and the allowed state', () => {
      const err = failure(() => TRANSFER.check('receive', 'draft', 'TO-000042'));
      expect(err).toBeInstanceOf(AppError);
      expect(err.status).toBe(409);
      expect(err.code).toBe('invalid_state');
      expect(err.message).toBe('Transfer order TO-000042 is draft; receive is allowed only when it is shipped');
      expect(err.details).toBeUndefined();
    });

    it('lists every allowed state, joined by "or"', () => {
      const err = failure(() => TRANSFER.check('cancel', 'received', 'TO-7'));
      expect(err.status).toBe(409);
      expect(err.code).toBe('invalid_state');
      expect(err.message).toBe('Transfer order TO-7 is received; cancel is allowed only when it is draft or shipped');
    });

    it('names the document kind it was built for', () => {
      const counts = new Transitions<'open' | 'counting' | 'completed', 'complete'>('Count session', {
        complete: { from: ['open', 'counting'], to: 'completed' },
      });
      const err = failure(() => counts.check('complete', 'completed', 'CS-3'));
      expect(err.code).toBe('invalid_state');
      expect(err.message).toBe('Count session CS-3 is completed; complete is allowed only when it is open or counting');
    });

    it('refuses a state outside the table, naming it', () => {
      const err = failure(() => TRANSFER.check('ship', 'archived', 'TO-1'));
      expect(err.status).toBe(409);
      expect(err.message).toContain('TO-1 is archived');
      expect(err.message).toContain('ship is allowed only when it is draft');
    });

    it('an action allowed from nowhere is always refused', () => {
      const err = failure(() => TRANSFER.check('reopen', 'cancelled', 'TO-9'));
      expect(err.status).toBe(409);
      expect(err.code).toBe('invalid_state');
      expect(err.message).toMatch(/^Transfer order TO-9 is cancelled; reopen is allowed only when it is/);
    });
  });

  describe('target', () => {
    it('is the `to` state of the action', () => {
      expect(TRANSFER.target('ship')).toBe('shipped');
      expect(TRANSFER.target('receive')).toBe('received');
      expect(TRANSFER.target('cancel')).toBe('cancelled');
    });

    it('throws for an action without a `to` (a plain Error, not an API error)', () => {
      const err = failure(() => TRANSFER.target('change'));
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(AppError);
      expect(err.message).toBe('Transfer order: action change has no fixed target state');
      expect(() => TRANSFER.target('reopen')).toThrow('Transfer order: action reopen has no fixed target state');
    });
  });
});
