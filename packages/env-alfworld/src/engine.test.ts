import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixturePath, hasData } from '@agentrl/core/test';
import { beforeAll, describe, expect, it } from 'vitest';
import { defaultAlfworldDataDir } from './data.ts';
import { AlfworldEngine } from './engine.ts';
import { type AlfworldGame, parseAlfworldGame } from './game.ts';
import { HELP_TEXT } from './text.ts';

/** A small hand-written household exercising every action type (texts as ALFWorld prints them). */
const PROBLEM = `(define (problem tiny)
(:domain alfred)
(:objects agent1 - agent Apple - object)
(:init
  (atLocation agent1 loc_bar_0_bar_0) ; start
  (receptacleAtLocation Cabinet_bar__plus_01 loc_bar_1_bar_1)
  (receptacleAtLocation Cabinet_bar__plus_02 loc_bar_1_bar_1)
  (receptacleAtLocation CounterTop_bar_1 loc_bar_2_bar_2)
  (receptacleAtLocation Desk_bar_1 loc_bar_6_bar_6)
  (receptacleAtLocation Fridge_bar_1 loc_bar_4_bar_4)
  (receptacleAtLocation Microwave_bar_1 loc_bar_3_bar_3)
  (receptacleAtLocation Sink_bar_1_bar_SinkBasin loc_bar_5_bar_5)
  (receptacleType Cabinet_bar__plus_01 CabinetType) (receptacleType Cabinet_bar__plus_02 CabinetType)
  (receptacleType CounterTop_bar_1 CounterTopType) (receptacleType Desk_bar_1 DeskType)
  (receptacleType Fridge_bar_1 FridgeType) (receptacleType Microwave_bar_1 MicrowaveType)
  (receptacleType Sink_bar_1_bar_SinkBasin SinkBasinType)
  (openable Cabinet_bar__plus_01) (openable Cabinet_bar__plus_02) (openable Fridge_bar_1) (openable Microwave_bar_1)
  (objectType Apple_bar_1 AppleType) (objectType Mug_bar_1 MugType) (objectType Knife_bar_1 KnifeType)
  (objectType DeskLamp_bar_1 DeskLampType) (objectType Book_bar_1 BookType)
  (pickupable Apple_bar_1) (pickupable Mug_bar_1) (pickupable Knife_bar_1) (pickupable Book_bar_1)
  (heatable Apple_bar_1) (coolable Apple_bar_1) (sliceable Apple_bar_1) (cleanable Mug_bar_1)
  (isReceptacleObject Mug_bar_1) (toggleable DeskLamp_bar_1) (isCool Mug_bar_1)
  (inReceptacle Apple_bar_1 Cabinet_bar__plus_01) (objectAtLocation Apple_bar_1 loc_bar_1_bar_1)
  (inReceptacle Mug_bar_1 CounterTop_bar_1) (objectAtLocation Mug_bar_1 loc_bar_2_bar_2)
  (inReceptacle Knife_bar_1 CounterTop_bar_1) (objectAtLocation Knife_bar_1 loc_bar_2_bar_2)
  (inReceptacle Book_bar_1 CounterTop_bar_1) (inReceptacle Book_bar_1 Desk_bar_1)
  (objectAtLocation Book_bar_1 loc_bar_2_bar_2)
  (inReceptacle DeskLamp_bar_1 Desk_bar_1) (objectAtLocation DeskLamp_bar_1 loc_bar_6_bar_6)
  (canContain CounterTopType AppleType) (canContain CounterTopType AppleType) (canContain CabinetType AppleType)
  (canContain CounterTopType KnifeType) (canContain CabinetType MugType)
  (= (total-cost) 0)
)
(:goal (and (exists (?r - receptacle) (exists (?o - object) (and (heatable ?o) (objectType ?o AppleType)
  (receptacleType ?r CounterTopType) (isHot ?o) (inReceptacle ?o ?r)))))))`;

const GRAMMAR = `grammar :: """
{"intro": [{"rhs": "x"}], "task": [{"rhs": "Your task is to: put a hot apple in countertop."}]}
""";`;

function tiny(dialect: '0.4' | '0.3' = '0.4'): AlfworldEngine {
  const text = JSON.stringify({
    pddl_domain: '',
    grammar: GRAMMAR,
    pddl_problem: PROBLEM,
    solvable: true,
    walkthrough: [],
  });
  return new AlfworldEngine(parseAlfworldGame(text, 'tiny.tw-pddl'), { dialect });
}

const GO_ALL = [
  'go to cabinet 1',
  'go to cabinet 2',
  'go to countertop 1',
  'go to desk 1',
  'go to fridge 1',
  'go to microwave 1',
  'go to sinkbasin 1',
];

describe('AlfworldEngine on a hand-written household', () => {
  it('prints the intro with every located receptacle in id order, numbers counting down', () => {
    const engine = tiny();
    const { observation, admissibleCommands } = engine.reset();
    expect(observation).toBe(
      '-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, you see a cabinet 2, a cabinet 1, a countertop 1, a desk 1, a fridge 1, a microwave 1, and a sinkbasin 1.\n\nYour task is to: put a hot apple in countertop.',
    );
    expect(admissibleCommands).toEqual([...GO_ALL, 'help', 'inventory', 'look']);
    expect(engine.won).toBe(false);
  });

  it('answers look, inventory and help with the fixed texts before moving', () => {
    const engine = tiny();
    engine.reset();
    expect(engine.step('look').observation).toBe(
      'You are in the middle of a room. Looking quickly around you, you see nothing.',
    );
    expect(engine.step('inventory').observation).toBe('You are not carrying anything.');
    expect(engine.step('help').observation).toBe(HELP_TEXT);
    expect(HELP_TEXT.split('\n')).toHaveLength(15);
    expect(HELP_TEXT.startsWith('Available commands:\n  look:' + ' '.repeat(29))).toBe(true);
  });

  it('says Nothing happens. to unknown, malformed and inadmissible commands and changes nothing', () => {
    const engine = tiny();
    const before = engine.reset().admissibleCommands;
    for (const cmd of [
      'LOOK',
      'go  to desk 1',
      'open cabinet 1',
      '',
      'put apple 1 in/on desk 1',
      'go to the desk 1',
    ]) {
      const r = engine.step(cmd);
      expect(r.observation).toBe('Nothing happens.');
      expect(r.admissibleCommands).toEqual(before);
      expect(r.won).toBe(false);
    }
    expect(engine.step(' \t\nlook\u3000').observation).toContain('You are in the middle');
  });

  it('plays the goal through with exact feedback for go, open, take, heat, move, close, examine and use', () => {
    const engine = tiny();
    engine.reset();
    const s = (cmd: string): string => engine.step(cmd).observation;
    expect(s('go to cabinet 1')).toBe('You arrive at cabinet 1. The cabinet 1 is closed.');
    expect(engine.admissibleCommands).toEqual([
      'examine cabinet 1',
      'examine cabinet 2',
      'go to countertop 1',
      'go to desk 1',
      'go to fridge 1',
      'go to microwave 1',
      'go to sinkbasin 1',
      'help',
      'inventory',
      'look',
      'open cabinet 1',
      'open cabinet 2',
    ]);
    expect(s('look')).toBe(
      'You are facing the cabinet 2, and cabinet 1. Next to it, you see nothing.',
    );
    expect(s('open cabinet 2')).toBe(
      'You open the cabinet 2. The cabinet 2 is open. In it, you see a apple 1.',
    );
    expect(s('examine cabinet 2')).toBe('The cabinet 2 is open. In it, you see a apple 1.');
    expect(s('take apple 1 from cabinet 2')).toBe('You pick up the apple 1 from the cabinet 2.');
    expect(s('examine apple 1')).toBe("There's nothing special about apple 1.");
    expect(s('inventory')).toBe('You are carrying: a apple 1.');
    expect(s('examine cabinet 2')).toBe('The cabinet 2 is open. In it, you see nothing.');
    // put it back into the other cabinet of the same location: look lists it next to cabinet 2
    expect(s('open cabinet 1')).toBe(
      'You open the cabinet 1. The cabinet 1 is open. In it, you see nothing.',
    );
    expect(s('move apple 1 to cabinet 1')).toBe('You move the apple 1 to the cabinet 1.');
    expect(s('look')).toBe(
      'You are facing the cabinet 2, and cabinet 1. Next to it, you see a apple 1.',
    );
    expect(s('take apple 1 from cabinet 1')).toBe('You pick up the apple 1 from the cabinet 1.');
    expect(s('close cabinet 1')).toBe('You close the cabinet 1.');
    expect(s('go to microwave 1')).toBe('You arrive at microwave 1. The microwave 1 is closed.');
    expect(engine.admissibleCommands).toContain('heat apple 1 with microwave 1');
    expect(s('heat apple 1 with microwave 1')).toBe('You heat the apple 1 using the microwave 1.');
    expect(s('examine apple 1')).toBe('This is a hot apple 1.');
    expect(s('go to fridge 1')).toBe('You arrive at fridge 1. The fridge 1 is closed.');
    expect(s('cool apple 1 with fridge 1')).toBe('You cool the apple 1 using the fridge 1.');
    expect(s('examine apple 1')).toBe('This is a cold apple 1.');
    expect(s('go to microwave 1')).toContain('You arrive at microwave 1.');
    s('heat apple 1 with microwave 1');
    expect(s('go to desk 1')).toBe(
      'You arrive at desk 1. On the desk 1, you see a book 1, and a desklamp 1.',
    );
    expect(s('use desklamp 1')).toBe('You turn on the desklamp 1.');
    expect(s('use desklamp 1')).toBe('You turn on the desklamp 1.');
    // a lamp is never held, so the real engine never lists `examine` for it
    expect(s('examine desklamp 1')).toBe('Nothing happens.');
    expect(engine.admissibleCommands).not.toContain('take book 1 from desk 1');
    const last = engine.step('go to countertop 1');
    expect(last.observation).toBe(
      'You arrive at countertop 1. On the countertop 1, you see a book 1, a knife 1, and a mug 1.',
    );
    expect(last.admissibleCommands).toContain('move apple 1 to countertop 1');
    expect(last.admissibleCommands).not.toContain('move apple 1 to desk 1');
    const win = engine.step('move apple 1 to countertop 1');
    expect(win).toMatchObject({
      observation: 'You move the apple 1 to the countertop 1.',
      won: true,
    });
  });

  it('lists and describes `examine <o>` for the held object only, as the real engine does', () => {
    for (const dialect of ['0.4', '0.3'] as const) {
      const engine = tiny(dialect);
      engine.reset();
      engine.step('go to countertop 1');
      // the mug, knife and book lie in a visible receptacle here: not examinable
      const lying = engine.admissibleCommands;
      for (const o of ['mug 1', 'knife 1', 'book 1']) {
        expect(lying).not.toContain(`examine ${o}`);
        expect(lying).toContain(`take ${o} from countertop 1`);
      }
      const miss = engine.step('examine mug 1');
      expect(miss.observation).toBe('Nothing happens.');
      expect(miss.admissibleCommands).toEqual(lying);
      // held: listed, and described
      engine.step('take mug 1 from countertop 1');
      expect(engine.admissibleCommands).toContain('examine mug 1');
      expect(engine.admissibleCommands).not.toContain('examine knife 1');
      expect(engine.step('examine mug 1').observation).toBe(
        'This is a normal mug 1. In it, you see nothing.',
      );
      expect(engine.step('examine knife 1').observation).toBe('Nothing happens.');
    }
  });

  it('keeps an object in two receptacles listed in the other after taking it from one', () => {
    const engine = tiny();
    engine.reset();
    engine.step('go to countertop 1');
    expect(engine.step('take book 1 from countertop 1').observation).toBe(
      'You pick up the book 1 from the countertop 1.',
    );
    expect(engine.step('go to desk 1').observation).toBe(
      'You arrive at desk 1. On the desk 1, you see a book 1, and a desklamp 1.',
    );
    expect(engine.admissibleCommands).toContain('examine book 1');
  });

  it('slices with a held knife, cleans in a sink basin, and reads the combined examine texts', () => {
    const engine = tiny();
    engine.reset();
    engine.step('go to countertop 1');
    engine.step('take knife 1 from countertop 1');
    engine.step('go to cabinet 1');
    // the apple is inside a closed cabinet here: slicing is still admissible
    expect(engine.admissibleCommands).toContain('slice apple 1 with knife 1');
    expect(engine.step('slice apple 1 with knife 1').observation).toBe(
      'You sliced the apple 1 with the knife 1.',
    );
    engine.step('go to countertop 1');
    engine.step('move knife 1 to countertop 1');
    engine.step('go to cabinet 1');
    engine.step('open cabinet 2');
    engine.step('take apple 1 from cabinet 2');
    expect(engine.step('examine apple 1').observation).toBe('This is a sliced apple 1.');
    engine.step('go to countertop 1');
    engine.step('move apple 1 to countertop 1');
    engine.step('take mug 1 from countertop 1');
    expect(engine.step('examine mug 1').observation).toBe(
      'This is a normal mug 1. In it, you see nothing.',
    );
    expect(engine.step('go to sinkbasin 1').observation).toBe(
      'You arrive at sinkbasin 1. On the sinkbasin 1, you see nothing.',
    );
    expect(engine.step('clean mug 1 with sinkbasin 1').observation).toBe(
      'You clean the mug 1 using the sinkbasin 1.',
    );
  });

  it('speaks the 0.3 dialect: put X in/on Y, locations in go to, no help', () => {
    const engine = tiny('0.3');
    expect(engine.reset().admissibleCommands).toEqual([...GO_ALL, 'inventory', 'look']);
    expect(engine.step('help').observation).toBe('Nothing happens.');
    // locations sorted: loc_bar_0, _1, _2, _3, _4, _5, _6 -> loc 7 .. loc 1
    expect(engine.step('go to countertop 1').observation).toBe(
      'You arrive at loc 5. On the countertop 1, you see a book 1, a knife 1, and a mug 1.',
    );
    engine.step('take knife 1 from countertop 1');
    expect(engine.admissibleCommands).toContain('put knife 1 in/on countertop 1');
    expect(engine.step('move knife 1 to countertop 1').observation).toBe('Nothing happens.');
    expect(engine.step('put knife 1 in/on countertop 1').observation).toBe(
      'You put the knife 1 in/on the countertop 1.',
    );
  });
});

describe('HELP_TEXT', () => {
  it('is the help block of ALFWorld 0.4, line for line, with one final newline', () => {
    expect(HELP_TEXT).toBe(readFileSync(fixturePath('alfworld', 'help.txt'), 'utf8'));
  });
});

/** One real valid_seen game, read by the tests below when the ALFWorld data is there. */
const BEDROOM = join(
  defaultAlfworldDataDir(),
  'json_2.1.1/valid_seen/pick_two_obj_and_place-Book-None-Desk-302/trial_T20190906_181233_363875/game.tw-pddl',
);
const hasBedroom = hasData(
  'alfworld',
  'env-alfworld: AlfworldEngine on a real game, and on a real bedroom',
  {
    paths: [BEDROOM],
  },
);

describe.skipIf(!hasBedroom)('AlfworldEngine on a real game', () => {
  it('prints the recorded intro of a valid_seen game', () => {
    const path = BEDROOM;
    const engine = new AlfworldEngine(parseAlfworldGame(readFileSync(path, 'utf8'), path));
    expect(engine.reset().observation).toBe(
      '-= Welcome to TextWorld, ALFRED! =-\n\nYou are in the middle of a room. Looking quickly around you, you see a bed 1, a desk 1, a drawer 3, a drawer 2, a drawer 1, a garbagecan 1, a safe 1, a shelf 5, a shelf 4, a shelf 3, a shelf 2, a shelf 1, a sidetable 2, and a sidetable 1.\n\nYour task is to: find two book and put them in desk.',
    );
  });
});

describe.skipIf(!hasBedroom)(
  'AlfworldEngine on a real bedroom (valid_seen pick_two_obj_and_place-Book-None-Desk-302)',
  () => {
    let game: AlfworldGame;
    beforeAll(() => {
      game = parseAlfworldGame(readFileSync(BEDROOM, 'utf8'), BEDROOM);
    });
    // expected strings derived by hand from the file: ids in code-point order, numbers counting down
    const rooms = [
      'bed 1',
      'desk 1',
      'drawer 1',
      'drawer 2',
      'drawer 3',
      'garbagecan 1',
      'safe 1',
      'shelf 1',
      'shelf 2',
      'shelf 3',
      'shelf 4',
      'shelf 5',
      'sidetable 1',
      'sidetable 2',
    ];

    it('lists the admissible commands, lists a receptacle in id order, and answers each command', () => {
      const engine = new AlfworldEngine(game);
      expect(engine.reset().admissibleCommands).toEqual([
        ...rooms.map((r) => `go to ${r}`),
        'help',
        'inventory',
        'look',
      ]);
      const s = (c: string): string => engine.step(c).observation;
      expect(s('go to bed 1')).toBe(
        'You arrive at bed 1. On the bed 1, you see a book 2, a book 1, a pillow 1, and a teddybear 1.',
      );
      expect(s('take book 2 from bed 1')).toBe('You pick up the book 2 from the bed 1.');
      expect(s('look')).toBe('You are facing the bed 1. Next to it, you see nothing.');
      expect(s('inventory')).toBe('You are carrying: a book 2.');
      expect(s('examine book 2')).toBe("There's nothing special about book 2.");
      // drawer 1 (the last drawer id) has no door in this scene; drawers 2 and 3 do
      expect(s('go to drawer 1')).toBe('You arrive at drawer 1. On the drawer 1, you see nothing.');
      expect(s('open drawer 1')).toBe('Nothing happens.');
      expect(engine.admissibleCommands).toEqual([
        'examine book 2',
        'examine drawer 1',
        ...rooms.filter((r) => r !== 'drawer 1').map((r) => `go to ${r}`),
        'help',
        'inventory',
        'look',
        'move book 2 to drawer 1',
      ]);
      expect(s('go to drawer 2')).toBe('You arrive at drawer 2. The drawer 2 is closed.');
      expect(s('open drawer 2')).toMatch(
        /^You open the drawer 2\. The drawer 2 is open\. In it, you see /,
      );
      expect(s('close drawer 2')).toBe('You close the drawer 2.');
    });

    it('names the location in the 0.3 dialect and says put ... in/on', () => {
      const engine = new AlfworldEngine(game, { dialect: '0.3' });
      engine.reset();
      // 23 locations; the bed's location is the second in id order, so it is loc 22
      expect(engine.step('go to bed 1').observation).toBe(
        'You arrive at loc 22. On the bed 1, you see a book 2, a book 1, a pillow 1, and a teddybear 1.',
      );
      engine.step('take book 1 from bed 1');
      engine.step('go to desk 1');
      expect(engine.admissibleCommands).toContain('put book 1 in/on desk 1');
      expect(engine.step('put book 1 in/on desk 1').observation).toBe(
        'You put the book 1 in/on the desk 1.',
      );
    });
  },
);

describe('parseAlfworldGame', () => {
  const base = {
    pddl_domain: '',
    grammar: GRAMMAR,
    pddl_problem: PROBLEM,
    solvable: true,
    walkthrough: [],
  };
  const cases: [string, string, RegExp][] = [
    ['not JSON', '{', /bad\.tw-pddl: is not JSON/],
    ['no problem', JSON.stringify({ ...base, pddl_problem: 3 }), /"pddl_problem" is missing/],
    ['no grammar', JSON.stringify({ ...base, grammar: undefined }), /"grammar" is missing/],
    [
      'no init',
      JSON.stringify({ ...base, pddl_problem: PROBLEM.replace('(:init', '(:nope') }),
      /no \(:init/,
    ],
    [
      'no goal',
      JSON.stringify({ ...base, pddl_problem: PROBLEM.replace('(:goal', '(:nope') }),
      /no \(:goal/,
    ],
    [
      'no agent',
      JSON.stringify({
        ...base,
        pddl_problem: PROBLEM.replace('(atLocation agent1 loc_bar_0_bar_0)', ''),
      }),
      /atLocation/,
    ],
    ['no task', JSON.stringify({ ...base, grammar: 'grammar :: """{}""";' }), /no task sentence/],
  ];
  for (const [what, text, message] of cases) {
    it(`rejects a file with ${what}, naming the file`, () => {
      expect(() => parseAlfworldGame(text, 'bad.tw-pddl')).toThrow(message);
      try {
        parseAlfworldGame(text, 'bad.tw-pddl');
      } catch (e) {
        expect((e as { code: string }).code).toBe('BAD_DATA');
        expect((e as Error).message).toContain('bad.tw-pddl');
      }
    });
  }
});
